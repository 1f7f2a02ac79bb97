/*
 * h_cxx - C++ allocation through operator new/new[]/delete, exceptions and
 * library containers.  Leaks a new int[10] (40 bytes) and a 56-byte Widget.
 * libstdc++'s own constructor allocates 72,704 bytes (its emergency
 * exception pool) with malloc before main: it stays in use.
 */
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

struct Widget {
	int values[14];
	explicit Widget(int x)
	{
		for (int i = 0; i < 14; i++)
			values[i] = x + i;
	}
};

static Widget *make_widget(int x)
{
	return new Widget(x); /* @new_widget */
}

static int thrower(int x)
{
	if (x > 0)
		throw std::runtime_error("h_cxx: a long enough exception message");
	return x;
}

/*
 * The dead stack below main still holds copies of the pointers leak_some
 * dropped.  valgrind ignores them because it knows they are no longer
 * defined; ptleak, outside the process, cannot: wipe them so that both
 * scan the same memory.
 */
static void __attribute__((noinline)) scrub_stack(void)
{
	volatile char buf[8192];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = 0;
}

static long __attribute__((noinline)) leak_some(void)
{
	int *arr = new int[10]; /* @new_array */
	arr[0] = 1;
	Widget *lost = make_widget(3); /* @call_make_widget */
	return lost->values[0] + arr[0];
}

int main()
{
	long sum = 0;

	// new/delete and new[]/delete[] pairs
	for (int i = 0; i < 10; i++) {
		Widget *w = new Widget(i);
		int *a = new int[100 + i];
		a[0] = w->values[13];
		sum += a[0];
		delete[] a;
		delete w;
	}

	// an exception thrown and caught: the exception object comes from
	// __cxa_allocate_exception (malloc), its message from operator new
	try {
		thrower(1);
	} catch (const std::exception &e) {
		sum += e.what()[0];
	}

	// containers, freed when they go out of scope
	{
		std::string s(100, 'x');
		std::vector<int> v;
		for (int i = 0; i < 1000; i++)
			v.push_back(i);
		s += " and more";
		sum += (long)s.size() + v[999];
	}

	// the leaks
	sum += leak_some(); /* @call_leaks */
	scrub_stack();

	std::printf("h_cxx: sum %ld\n", sum); /* @stdout_buf */
	return 0;
}
