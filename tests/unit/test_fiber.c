/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the fiber loop (util/fiber.h): fibers that talk over
 * sockets wait and wake each other, a wait times out, an event for a wait
 * that is over never wakes a later one, fibers go to other workers, a
 * blocking call runs beside the loop without stopping it, and all of it
 * with the assembly switch and with ucontext. An owned fd keeps the edges
 * that came while its fiber waited elsewhere.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/error.h"
#include "util/fiber.h"

#define ROUNDS 2000

static int sp[2];
static atomic_int finished;
static int failures;

static void need(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fiber test: %s\n", what);
		failures++;
	}
}

static void setup_pair(void)
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sp), 0);
	failures = 0;
	atomic_store(&finished, 0);
}

static void done_one(int of)
{
	if (atomic_fetch_add(&finished, 1) + 1 == of)
		fiber_quit();
}

/* Run first() as the first fiber of one worker until the fibers it
 * started call done_one(fibers) between them; none may have failed. */
static void run_one_worker(void (*first)(unsigned, void *), bool ucontext, int fibers)
{
	struct error err = { 0 };
	failures = 0;
	atomic_store(&finished, 0);
	fiber_force_ucontext(ucontext);
	assert_int_equal(fiber_main(1, first, NULL, &err), 0);
	fiber_force_ucontext(false);
	assert_int_equal(failures, 0);
	assert_int_equal(atomic_load(&finished), fibers);
}

/* ---- ping-pong: each side waits for the other ROUNDS times ---- */

static void pinger(void *arg)
{
	(void)arg;
	for (uint32_t i = 0; i < ROUNDS; i++) {
		uint32_t got = 0;
		need(fiber_send(sp[0], &i, sizeof(i), MSG_NOSIGNAL) == sizeof(i), "ping sent");
		need(fiber_read(sp[0], &got, sizeof(got)) == sizeof(got) && got == i + 1, "pong read");
	}
	done_one(2);
}

static void ponger(void *arg)
{
	(void)arg;
	for (uint32_t i = 0; i < ROUNDS; i++) {
		uint32_t got = 0;
		need(fiber_read(sp[1], &got, sizeof(got)) == sizeof(got) && got == i, "ping read");
		got++;
		need(fiber_send(sp[1], &got, sizeof(got), MSG_NOSIGNAL) == sizeof(got), "pong sent");
	}
	done_one(2);
}

static void pingpong_first(unsigned index, void *arg)
{
	(void)arg;
	if (index != 0)
		return;
	/* The reader first: it must park before any byte exists. */
	need(fiber_spawn_on(0, ponger, NULL), "spawn ponger");
	need(fiber_spawn_on(fiber_workers() - 1, pinger, NULL), "spawn pinger");
}

static void run_pingpong(unsigned workers, bool ucontext)
{
	struct error err = { 0 };
	setup_pair();
	fiber_force_ucontext(ucontext);
	assert_int_equal(fiber_main(workers, pingpong_first, NULL, &err), 0);
	fiber_force_ucontext(false);
	assert_int_equal(failures, 0);
	assert_int_equal(atomic_load(&finished), 2);
	close(sp[0]);
	close(sp[1]);
}

static void test_pingpong_asm(void **state)
{
	(void)state;
	run_pingpong(1, false);
}

static void test_pingpong_ucontext(void **state)
{
	(void)state;
	run_pingpong(1, true);
}

static void test_pingpong_two_workers(void **state)
{
	(void)state;
	run_pingpong(2, false);
}

/* ---- timeouts, and an event of a wait that is over ---- */

static int late_fd;

static void late_writer(void *arg)
{
	(void)arg;
	fiber_sleep(10);
	need(write(late_fd, "x", 1) == 1, "write a");
}

static void waiter(void *arg)
{
	(void)arg;
	int a[2], b[2];
	need(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, a) == 0 &&
		     socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, b) == 0,
	     "pairs");
	/* Nothing comes: the wait times out. */
	need(fiber_wait(a[0], POLLIN, 30) == 0, "an empty wait times out");

	/* A read with a timeout of its own fails with EAGAIN. */
	char c;
	fiber_io_timeout_set(a[0], 20);
	errno = 0;
	need(fiber_read(a[0], &c, 1) < 0 && errno == EAGAIN, "a read times out with EAGAIN");

	/* Wait on both, parked (nothing is there yet), a answers. */
	late_fd = a[1];
	need(fiber_spawn_on(0, late_writer, NULL), "spawn writer");
	struct pollfd p[2] = { { .fd = a[0], .events = POLLIN }, { .fd = b[0], .events = POLLIN } };
	need(fiber_poll(p, 2, 1000) == 1 && (p[0].revents & POLLIN) && !p[1].revents, "a wakes the pair wait");
	need(read(a[0], &c, 1) == 1, "read a");
	/* b's arming is still in the kernel: its event now belongs to a
	 * wait that is over and must not end the next one early. */
	need(write(b[1], "y", 1) == 1, "write b");
	need(fiber_wait(a[0], POLLIN, 50) == 0, "b's late event does not wake a wait on a");
	/* b is still readable, and a new wait on it sees so. */
	need(fiber_wait(b[0], POLLIN, 1000) > 0, "b is seen by a wait of its own");

	/* A sleep is a wait on nothing. */
	fiber_sleep(5);
	/* A closed fd is POLLNVAL at once, as poll(2) says. */
	int dead = a[1];
	close(a[1]);
	need(fiber_wait(dead, POLLIN, 1000) == POLLNVAL, "a closed fd is POLLNVAL");
	close(a[0]);
	close(b[0]);
	close(b[1]);
	done_one(1);
}

static void waiter_first(unsigned index, void *arg)
{
	(void)index;
	(void)arg;
	need(fiber_spawn_on(0, waiter, NULL), "spawn waiter");
}

static void run_waits(bool ucontext)
{
	run_one_worker(waiter_first, ucontext, 1);
}

static void test_waits_asm(void **state)
{
	(void)state;
	run_waits(false);
}

static void test_waits_ucontext(void **state)
{
	(void)state;
	run_waits(true);
}

/* ---- many fibers parked at once, each woken by its own fd ---- */

#define MANY 600
static int many_fds[MANY][2];

static void parked(void *arg)
{
	int i = (int)(intptr_t)arg;
	char c = 0;
	need(fiber_wait(many_fds[i][0], POLLIN, 10000) > 0, "parked fiber woken");
	need(read(many_fds[i][0], &c, 1) == 1 && c == (char)i, "its own byte");
	done_one(MANY);
}

static void waker(void *arg)
{
	(void)arg;
	/* Woken from last to first, each after the others parked. */
	fiber_sleep(10);
	for (int i = MANY - 1; i >= 0; i--) {
		char c = (char)i;
		need(write(many_fds[i][1], &c, 1) == 1, "wake write");
		if (i % 50 == 0)
			fiber_sleep(1);
	}
}

static void many_first(unsigned index, void *arg)
{
	(void)arg;
	if (index != 0)
		return;
	for (int i = 0; i < MANY; i++)
		need(fiber_spawn_on((unsigned)i, parked, (void *)(intptr_t)i), "spawn parked");
	need(fiber_spawn_on(0, waker, NULL), "spawn waker");
}

static void test_many_parked(void **state)
{
	(void)state;
	struct error err = { 0 };
	failures = 0;
	atomic_store(&finished, 0);
	for (int i = 0; i < MANY; i++)
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, many_fds[i]), 0);
	assert_int_equal(fiber_main(2, many_first, NULL, &err), 0);
	assert_int_equal(failures, 0);
	assert_int_equal(atomic_load(&finished), MANY);
	for (int i = 0; i < MANY; i++) {
		close(many_fds[i][0]);
		close(many_fds[i][1]);
	}
}

/* ---- a blocking call beside the loop ---- */

static atomic_int ticks;
static atomic_bool blocked_done;
static pthread_t loop_thread;

static void blocking_call(void *arg)
{
	(void)arg;
	need(!pthread_equal(pthread_self(), loop_thread), "runs on a thread of its own");
	/* The loop keeps running the ticker meanwhile. */
	int before = atomic_load(&ticks);
	for (int i = 0; i < 200 && atomic_load(&ticks) < before + 3; i++)
		usleep(5000);
	need(atomic_load(&ticks) >= before + 3, "the loop ran while the call blocked");
}

static void ticker(void *arg)
{
	(void)arg;
	while (!atomic_load(&blocked_done)) {
		atomic_fetch_add(&ticks, 1);
		fiber_sleep(2);
	}
	done_one(2);
}

static void blocker(void *arg)
{
	(void)arg;
	fiber_run_blocking(blocking_call, NULL);
	atomic_store(&blocked_done, true);
	done_one(2);
}

static void blocking_first(unsigned index, void *arg)
{
	(void)index;
	(void)arg;
	loop_thread = pthread_self();
	need(fiber_spawn_on(0, ticker, NULL), "spawn ticker");
	need(fiber_spawn_on(0, blocker, NULL), "spawn blocker");
}

static void test_run_blocking(void **state)
{
	(void)state;
	run_one_worker(blocking_first, false, 2);
}

/* ---- the idle hook: each worker, before it waits; woken by wake_all ---- */

static atomic_int idle_calls[2];
static __thread int my_index = -1;

static void count_idle(void)
{
	if (my_index >= 0)
		atomic_fetch_add(&idle_calls[my_index], 1);
}

static void idle_checker(void *arg)
{
	(void)arg;
	fiber_sleep(20);
	int before0 = atomic_load(&idle_calls[0]), before1 = atomic_load(&idle_calls[1]);
	need(before0 > 0 && before1 > 0, "each worker ran the hook before it first waited");
	/* Worker 1 has nothing to run: only the wake-up brings it round. */
	fiber_wake_all();
	fiber_sleep(20);
	need(atomic_load(&idle_calls[1]) > before1, "a woken worker runs the hook again");
	need(atomic_load(&idle_calls[0]) > before0, "a worker whose fiber sleeps runs the hook");
	done_one(1);
}

static void idle_first(unsigned index, void *arg)
{
	(void)arg;
	my_index = (int)index;
	if (index == 0)
		need(fiber_spawn_on(0, idle_checker, NULL), "spawn checker");
}

static void test_idle_hook(void **state)
{
	(void)state;
	struct error err = { 0 };
	failures = 0;
	atomic_store(&finished, 0);
	fiber_set_idle(count_idle);
	assert_int_equal(fiber_main(2, idle_first, NULL, &err), 0);
	fiber_set_idle(NULL);
	assert_int_equal(failures, 0);
	assert_int_equal(atomic_load(&finished), 1);
}

/* ---- owned fds: added once, edge-triggered ---- */

static void owner(void *arg)
{
	(void)arg;
	int x[2], y[2], z[2];
	char buf[8];
	need(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, x) == 0 &&
		     socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, y) == 0,
	     "pairs");
	fiber_fd_own(x[0]);
	fiber_fd_own(y[0]);
	/* The first wait adds x, and sees what is there already. */
	need(write(x[1], "a", 1) == 1, "write x");
	need(fiber_wait(x[0], POLLIN, 1000) > 0 && read(x[0], buf, sizeof(buf)) == 1, "x added and read");
	need(read(x[0], buf, sizeof(buf)) < 0 && errno == EAGAIN, "x drained");

	/* x's edge comes while the fiber waits on y: it is kept, and the
	 * next wait on x ends at once. Dropped, that wait would park for an
	 * edge that never comes again. */
	need(write(x[1], "b", 1) == 1 && write(y[1], "c", 1) == 1, "write x and y");
	need(fiber_wait(y[0], POLLIN, 1000) > 0 && read(y[0], buf, sizeof(buf)) == 1, "y wakes its wait");
	need(fiber_wait(x[0], POLLIN, 300) > 0, "x's edge, come while waiting on y, is kept");
	need(read(x[0], buf, sizeof(buf)) == 1, "x read");

	/* A read that fills its buffer may leave bytes behind, with no edge
	 * to come for them. */
	need(write(x[1], "12345678", 8) == 8, "write 8");
	need(fiber_wait(x[0], POLLIN, 1000) > 0, "x readable");
	need(fiber_read(x[0], buf, 4) == 4, "a full read of 4");
	need(fiber_wait(x[0], POLLIN, 300) > 0, "the bytes behind a full read are seen");
	need(fiber_read(x[0], buf, 8) == 4, "the other 4");

	/* The peer's end of writing is seen by every later wait, as poll(2)
	 * says, though its one edge was taken. */
	need(shutdown(x[1], SHUT_WR) == 0, "shutdown");
	need(fiber_wait(x[0], POLLIN, 1000) > 0 && read(x[0], buf, sizeof(buf)) == 0, "the end is read");
	need(fiber_wait(x[0], POLLRDHUP, 300) & POLLRDHUP, "the end stays seen");
	need(fiber_wait(x[0], POLLIN, 300) & POLLIN, "and readable");

	/* Closed and its number taken again: the new socket is added anew. */
	int old = x[0];
	need(fiber_fd_close(x[0]) == 0, "close x");
	need(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, z) == 0 && z[0] == old, "z takes x's number");
	fiber_fd_own(z[0]);
	need(fiber_wait(z[0], POLLIN, 50) == 0, "z is empty");
	need(write(z[1], "d", 1) == 1, "write z");
	need(fiber_wait(z[0], POLLIN, 1000) > 0, "z, under x's number, is waited on");
	fiber_fd_close(z[0]);
	close(z[1]);
	close(x[1]);
	fiber_fd_close(y[0]);
	close(y[1]);
	done_one(1);
}

static void owner_first(unsigned index, void *arg)
{
	(void)index;
	(void)arg;
	need(fiber_spawn_on(0, owner, NULL), "spawn owner");
}

static void test_owned_fds(void **state)
{
	(void)state;
	run_one_worker(owner_first, false, 1);
}

/* ---- a fiber that never waits lets the others run ---- */

static atomic_bool reader_ran;

static void yield_reader(void *arg)
{
	(void)arg;
	char c;
	need(fiber_read(sp[0], &c, 1) == 1, "the reader's byte");
	atomic_store(&reader_ran, true);
	done_one(2);
}

static void yield_spinner(void *arg)
{
	(void)arg;
	need(write(sp[1], "k", 1) == 1, "write");
	/* Always ready: only the loop's look at epoll between turns lets
	 * the reader, parked on its socket, see the byte. */
	for (int i = 0; i < 100000 && !atomic_load(&reader_ran); i++)
		fiber_yield();
	need(atomic_load(&reader_ran), "the reader ran while the spinner yielded");
	done_one(2);
}

static void yield_first(unsigned index, void *arg)
{
	(void)index;
	(void)arg;
	need(fiber_spawn_on(0, yield_reader, NULL), "spawn reader");
	need(fiber_spawn_on(0, yield_spinner, NULL), "spawn spinner");
}

static void test_yield(void **state)
{
	(void)state;
	setup_pair();
	atomic_store(&reader_ran, false);
	run_one_worker(yield_first, false, 2);
	close(sp[0]);
	close(sp[1]);
}

/* Outside the loop the calls are the blocking calls they stand for. */
static void test_outside_a_fiber(void **state)
{
	(void)state;
	int p[2];
	char c;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, p), 0);
	assert_int_equal(fiber_wait(p[0], POLLIN, 10), 0);
	assert_int_equal(write(p[1], "z", 1), 1);
	assert_true(fiber_wait(p[0], POLLIN, 1000) & POLLIN);
	assert_int_equal(fiber_read(p[0], &c, 1), 1);
	assert_false(fiber_spawn_on(0, ponger, NULL));
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pingpong_asm),
		cmocka_unit_test(test_pingpong_ucontext),
		cmocka_unit_test(test_pingpong_two_workers),
		cmocka_unit_test(test_waits_asm),
		cmocka_unit_test(test_waits_ucontext),
		cmocka_unit_test(test_many_parked),
		cmocka_unit_test(test_run_blocking),
		cmocka_unit_test(test_idle_hook),
		cmocka_unit_test(test_owned_fds),
		cmocka_unit_test(test_yield),
		cmocka_unit_test(test_outside_a_fiber),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
