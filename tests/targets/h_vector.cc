// h_vector: a std::vector<std::string> leaked as a whole.  The vector
// object is definitely lost; its element array and the strings' heap
// buffers are indirectly lost, their bytes the vector's indirect bytes.
#include <cstdio>
#include <string>
#include <vector>

static void __attribute__((noinline)) leak_vector(void)
{
	auto *v = new std::vector<std::string>(); /* @vector */
	v->reserve(4);
	for (int i = 0; i < 4; i++)
		v->push_back(std::string(40 + i, 'a' + i)); /* @strings */
}

static void __attribute__((noinline)) scrub_stack(void)
{
	volatile char buf[8192];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = 0;
}

int main()
{
	leak_vector(); /* @call_leak */
	scrub_stack();
	return 0;
}
