/* cs.c - process-wide capstone handles (see cs.h). */
#include "cs.h"

static csh open_handle(int detail)
{
	csh h;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return 0;
	if (cs_option(h, detail ? CS_OPT_DETAIL : CS_OPT_SYNTAX,
		      detail ? CS_OPT_ON : CS_OPT_SYNTAX_ATT) != CS_ERR_OK) {
		cs_close(&h);
		return 0;
	}
	return h;
}

csh x86_cs_detail(void)
{
	static csh h;

	if (!h)
		h = open_handle(1);
	return h;
}

csh x86_cs_att(void)
{
	static csh h;

	if (!h)
		h = open_handle(0);
	return h;
}
