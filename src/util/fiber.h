/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_UTIL_FIBER_H
#define AIRLOCK_UTIL_FIBER_H

/*
 * Fibers on an epoll loop: a few worker threads (one per core) each run
 * many connections, every connection as straight-line code on a stack of
 * its own that gives the thread up wherever a blocking call would wait.
 *
 * Why not callbacks: a proxy's request path (strict parsing, decisions,
 * TLS, streamed and scanned bodies, tunnels) is where its security bugs
 * hide, and it stays reviewable as one function that reads top to bottom.
 * Only the waits change: fiber_wait and friends instead of blocking
 * sockets. Each fiber's state machine is its program counter; the loop
 * (fiber.c) is the only place that knows about epoll.
 *
 * Outside a fiber (a plain thread, a unit test) every call here behaves as
 * the blocking call it stands for, so code written for fibers runs
 * unchanged on either.
 *
 * WARNING: a fiber must never wait (call anything here that may wait)
 * while it holds a pthread mutex another fiber of the same worker may
 * take: that thread would block on the lock the waiting fiber holds.
 * OpenSSL's error queue and errno are the thread's, so read them before
 * the next wait.
 */

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

struct error;

typedef void (*fiber_fn)(void *arg);

/* Start `workers` threads (0: one per CPU this process may run on, at
 * most FIBER_MAX_WORKERS) and run first(index, arg) as the first fiber of
 * each. The calling thread becomes worker 0. Returns 0 after fiber_quit,
 * negative errno (err filled) when the workers cannot be made. */
#define FIBER_MAX_WORKERS 16
int fiber_main(unsigned workers, void (*first)(unsigned index, void *arg), void *arg, struct error *err);

/* End fiber_main: each worker stops once its ready fibers have run, and
 * every fiber still parked is dropped with its stack (tests). */
void fiber_quit(void);

/* idle() runs on each worker whenever it has no fiber left to run, before
 * it waits: the place to send what its fibers left buffered. Set before
 * fiber_main. */
void fiber_set_idle(void (*idle)(void));

/* Wake every worker (each then runs idle()). Async-signal-safe. */
void fiber_wake_all(void);

/* Workers running (1 outside fiber_main). */
unsigned fiber_workers(void);

/* Run fn(arg) as a new fiber on worker `index` (mod the count); arg is
 * the fiber's to own. False (nothing started, arg still the caller's)
 * when out of memory or when called outside the workers. */
bool fiber_spawn_on(unsigned index, fiber_fn fn, void *arg);

/* Wait for events on fd, as poll(2) on one fd: revents > 0, 0 on timeout
 * (timeout_ms < 0: none), negative errno on failure. */
int fiber_wait(int fd, short events, int timeout_ms);

/* poll(2): the number of entries with revents, 0 on timeout, -1 with
 * errno on failure. */
int fiber_poll(struct pollfd *fds, nfds_t n, int timeout_ms);

void fiber_sleep(int ms);

/* Let the worker's other fibers run, and look at epoll for them, before
 * this one goes on: for a loop that may never have to wait (a bulk
 * tunnel), every so many turns. */
void fiber_yield(void);

/* How long the calls below wait on fd before they fail with EAGAIN, as
 * SO_RCVTIMEO and SO_SNDTIMEO would (ms < 0: for ever). In a fiber the
 * timeout is the fiber's own (a few fds each); outside one it is set on
 * the socket. */
void fiber_io_timeout_set(int fd, int ms);
int fiber_io_timeout(int fd);

/* After a call on the non-blocking fd failed: true when it is to be made
 * again (EINTR, or EAGAIN and fd became ready for events within its
 * timeout); false with errno set (EAGAIN when the timeout passed). */
bool fiber_again(int fd, short events);

/* read(2), send(2) and connect(2) on a non-blocking socket, waiting in
 * the fiber where they would block. EINTR is retried; a timeout fails
 * with EAGAIN (connect: ETIMEDOUT). */
ssize_t fiber_read(int fd, void *p, size_t n);
ssize_t fiber_send(int fd, const void *p, size_t n, int flags);
int fiber_connect(int fd, const struct sockaddr *sa, socklen_t len, int timeout_ms);

/* fd, a socket this fiber waits on at every turn of an exchange (a
 * connection's client and server sides), stays in the worker's epoll set,
 * edge-triggered, until fiber_fd_close, instead of being armed for each
 * wait. Each new fd is owned anew, even under a number owned before.
 * WARNING: a wait on it parks until a new edge unless a call on it said
 * EAGAIN since the last one, or it was last read with fiber_read (a read
 * that fills its buffer marks the fd readable still). Outside a fiber, or
 * with FIBER_OWNED fds owned already, it is armed per wait as any other. */
void fiber_fd_own(int fd);
/* close(2), forgetting that fd was owned. */
int fiber_fd_close(int fd);

/* Run fn(arg) on a thread of its own and wait for it in the fiber: for a
 * call that blocks and has no non-blocking form (getaddrinfo). Outside a
 * fiber, or when no thread can be made, fn runs here. */
void fiber_run_blocking(void (*fn)(void *arg), void *arg);

/* Tests: switch stacks with ucontext(3) instead of the assembly switch
 * (the portable fallback, also taken where shadow stacks are on). */
void fiber_force_ucontext(bool on);

#endif
