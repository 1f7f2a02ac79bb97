/* main.c - ptleak's entry point: options, then a tracing session. */
#include <stdlib.h>

#include "session/options.h"
#include "session/tracer.h"
#include "base/util.h"

int main(int argc, char **argv)
{
	struct options o;
	int ret = options_parse(&o, argc, argv);

	if (ret) {
		options_free(&o);
		return ret == 1 ? 0 : ret;
	}
	util_quiet = o.quiet;
	ret = tracer_run(&o);
	options_free(&o);
	return ret < 0 ? 1 : ret;
}
