/*
 * c_census_cxx: C++ objects with vtables made before ptleak attaches.
 * Five shop::Gadget kept (a global array), three dropped; two
 * shop::inner::Widget<int> dropped; one plain struct without a vtable
 * dropped.  Then "ready", and it waits for a line on stdin ("quit").
 */
#include <cstdio>
#include <cstring>
#include <cstdlib>

namespace shop {
struct Gadget {
	virtual ~Gadget() {}
	virtual int price() const { return x; }
	int x = 1;
};

namespace inner {
template <typename T> struct Widget {
	virtual ~Widget() {}
	T v[4] = {};
};
}
}

struct Plain {
	long a, b, c;
};

static shop::Gadget *kept[5];
static char outbuf[256], inbuf[256];

__attribute__((noinline)) static void make(void)
{
	for (int i = 0; i < 5; i++)
		kept[i] = new shop::Gadget;
	for (int i = 0; i < 3; i++)
		(void)new shop::Gadget;
	for (int i = 0; i < 2; i++)
		(void)new shop::inner::Widget<int>;
	(void)new Plain{7, 8, 9};
}

/* No stale copy of a dropped pointer below the stack pointer. */
__attribute__((noinline)) static void scrub(void)
{
	volatile char pad[2048];

	memset((char *)pad, 0, sizeof(pad));
}

int main(void)
{
	char line[64];

	setvbuf(stdout, outbuf, _IOLBF, sizeof(outbuf));
	setvbuf(stdin, inbuf, _IOLBF, sizeof(inbuf));
	make();
	scrub();
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin) && strcmp(line, "quit\n"))
		;
	return 0;
}
