/*
 * h_register: at exit, one block is known only to a register (r12, put
 * there just before a raw exit_group), another to nobody.  Registers are
 * roots: the first is still reachable, the second definitely lost.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

static void *volatile slot;

int main(void)
{
	char *held = malloc(48); /* @in_register */
	char *lost = malloc(24); /* @lost */
	volatile char buf[4096];
	size_t i;

	memset(held, 1, 48);
	memset(lost, 2, 24);
	slot = held;
	held = lost = NULL;
	for (i = 0; i < sizeof(buf); i++)	/* no copies left on the stack */
		buf[i] = 0;
	__asm__ volatile("mov %0, %%r12\n\t"
			 "movq $0, (%1)\n\t"	/* and none in memory */
			 "mov %2, %%eax\n\t"
			 "xor %%edi, %%edi\n\t"
			 "syscall"
			 : : "r"(slot), "r"(&slot), "i"(SYS_exit_group)
			 : "rax", "rdi", "r12", "memory");
	return 1;
}
