/*
 * f_kinds: one leak from each creating function but open/pipe/socket
 * (f_basic) and dup* (f_dup), in this order, each taking the lowest free
 * number from 3 on:
 *   3,4 socketpair   5 eventfd   6 timerfd_create   7 signalfd
 *   8 epoll_create1  9 epoll_create  10 inotify_init1  11 inotify_init
 *   12 memfd_create  13 creat  14 openat  17 accept4 (15, its
 *   listening socket, and 16, the client, closed after)
 * plus calls that create nothing: signalfd on an existing fd, fcntl
 * F_GETFL, failed opens.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int sv[2], sfd, lis, cli, acc;
	sigset_t mask;
	struct sockaddr_un addr;
	char path[256];

	if (argc < 2)
		return 2;
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv); /* @socketpair */
	eventfd(0, EFD_CLOEXEC); /* @eventfd */
	timerfd_create(CLOCK_MONOTONIC, 0); /* @timerfd */
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR2);
	sfd = signalfd(-1, &mask, 0); /* @signalfd */
	signalfd(sfd, &mask, SFD_NONBLOCK);	/* same fd: nothing new */
	epoll_create1(0); /* @epoll_create1 */
	epoll_create(1); /* @epoll_create */
	inotify_init1(IN_CLOEXEC); /* @inotify_init1 */
	inotify_init(); /* @inotify_init */
	memfd_create("f_kinds", MFD_CLOEXEC); /* @memfd */
	snprintf(path, sizeof(path), "%s/created", argv[1]);
	creat(path, 0600); /* @creat */
	openat(AT_FDCWD, "/dev/null", O_RDONLY); /* @openat */
	fcntl(0, F_GETFL);
	open("/nonexistent/file", O_RDONLY);
	openat(AT_FDCWD, "/nonexistent/file", O_RDONLY);

	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/sock", argv[1]);
	lis = socket(AF_UNIX, SOCK_STREAM, 0);	/* 15, closed */
	bind(lis, (struct sockaddr *)&addr, sizeof(addr));
	listen(lis, 1);
	cli = socket(AF_UNIX, SOCK_STREAM, 0);	/* 16, closed */
	connect(cli, (struct sockaddr *)&addr, sizeof(addr));
	acc = accept4(lis, NULL, NULL, SOCK_CLOEXEC); /* @accept4 */
	close(cli);
	close(lis);
	return acc < 0;
}
