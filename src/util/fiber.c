/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fiber loop (fiber.h). Each worker thread owns an epoll instance, a
 * run queue, a heap of deadlines and the fibers it started; a fiber never
 * moves between workers. Switches go fiber -> worker -> fiber, saving
 * only what the ABI says a call preserves.
 *
 * A wait arms each fd EPOLLONESHOT with the fiber's slot and a wait
 * generation in the event's data: an event for an fd the fiber stopped
 * waiting on (the other half of a two-fd wait, a fiber that ended and whose
 * slot was reused) carries an old generation and is dropped, never
 * delivered to the wrong wait.
 *
 * A connection's own sockets, waited on at every turn of its exchange, are
 * instead added once, edge-triggered (fiber_fd_own): an edge that comes
 * while the fiber waits on something else is kept as a pending bit on the
 * fiber, and the next wait for it returns at once. That spares the
 * epoll_ctl each wait on them would cost.
 */
#include "util/fiber.h"

#include <errno.h>
#include <stdatomic.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/error.h"

#if defined(__SANITIZE_ADDRESS__)
#define FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FIBER_ASAN 1
#endif
#endif
#ifdef FIBER_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

/* A connection's stack: OpenSSL's handshake and the request path use a
 * few tens of KiB; pages never touched cost nothing. */
#define FIBER_STACK (256 * 1024)
#define FIBER_GUARD 4096
#define FIBER_TIMEOUTS 6
#define FIBER_ARMED 8
#define FIBER_OWNED 4
/* In an owned fd's event data, beside its fd, slot and the fiber's life. */
#define TAG_OWNED (1u << 31)
/* States that stay once seen: a wait on an owned fd reports them again,
 * as poll(2) would, though their edge was taken by an earlier wait. */
#define OWNED_STICKY (EPOLLHUP | EPOLLERR | EPOLLRDHUP)
#define FIBER_CACHE 32 /* ended fibers kept, stack and all, per worker */
#define EV_BATCH 128
#define TAG_WAKE UINT64_MAX

struct fiber {
	void *sp; /* the assembly switch's saved stack pointer */
	ucontext_t uc;
	char *map; /* the stack's mapping, guard page first */
	fiber_fn fn;
	void *arg;
	struct worker *w;
	uint32_t slot;
	uint16_t gen; /* of the wait in progress */
	bool waiting, queued, done;
	struct pollfd *pfds;
	nfds_t npfds;
	int nready;
	int64_t deadline;
	size_t heap_i; /* SIZE_MAX: no deadline */
	struct fiber *next;
	struct {
		int fd, ms;
	} timeouts[FIBER_TIMEOUTS];
	int armed[FIBER_ARMED]; /* fds this fiber added to the epoll set */
	uint16_t life;		/* which fiber of this slot: owned fds' events name it */
	struct {
		int fd;
		bool added;
		uint32_t pending; /* epoll events come while no wait took them */
	} owned[FIBER_OWNED];
	void *asan_fake;
};

struct pending {
	fiber_fn fn;
	void *arg;
	struct pending *next;
};

struct worker {
	unsigned index;
	int ep;
	int wake; /* eventfd: fibers sent by another worker wait in `queue` */
	pthread_mutex_t lock;
	struct pending *queue;
	struct fiber **slots;
	uint32_t n_slots, cap_slots;
	uint32_t *free_slots;
	uint32_t n_free_slots;
	struct fiber *cache;
	unsigned n_cache;
	struct fiber *ready, *ready_tail;
	struct fiber *yielded; /* run again after the loop's next look at epoll */
	struct fiber **heap;
	size_t heap_n, heap_cap;
	struct fiber *cur;
	void *sp;
	ucontext_t uc;
	void (*first)(unsigned, void *);
	void *first_arg;
	const void *asan_bottom;
	size_t asan_size;
	void *asan_fake;
};

static struct worker *workers;
static unsigned n_workers;
static atomic_bool quitting;
static void (*idle_hook)(void);
static bool with_ucontext;
static __thread struct worker *self;

/* ---- switching stacks ---- */

#if defined(__x86_64__)
/* switch(save, load): push the callee-saved registers and the SSE and
 * x87 control words, store the stack pointer in *save, take load's and
 * pop them. A new stack starts in fiber_start with the entry in r12 and
 * its argument in r13. */
__asm__(".text\n"
	".p2align 4\n"
	".globl airlock_fiber_switch\n"
	".hidden airlock_fiber_switch\n"
	".type airlock_fiber_switch,@function\n"
	"airlock_fiber_switch:\n"
	"\tpushq %rbp\n"
	"\tpushq %rbx\n"
	"\tpushq %r12\n"
	"\tpushq %r13\n"
	"\tpushq %r14\n"
	"\tpushq %r15\n"
	"\tsubq $8, %rsp\n"
	"\tstmxcsr (%rsp)\n"
	"\tfnstcw 4(%rsp)\n"
	"\tmovq %rsp, (%rdi)\n"
	"\tmovq %rsi, %rsp\n"
	"\tldmxcsr (%rsp)\n"
	"\tfldcw 4(%rsp)\n"
	"\taddq $8, %rsp\n"
	"\tpopq %r15\n"
	"\tpopq %r14\n"
	"\tpopq %r13\n"
	"\tpopq %r12\n"
	"\tpopq %rbx\n"
	"\tpopq %rbp\n"
	"\tret\n"
	".size airlock_fiber_switch, .-airlock_fiber_switch\n"
	".p2align 4\n"
	".globl airlock_fiber_start\n"
	".hidden airlock_fiber_start\n"
	".type airlock_fiber_start,@function\n"
	"airlock_fiber_start:\n"
	"\tmovq %r13, %rdi\n"
	"\tcallq *%r12\n"
	"\tud2\n"
	".size airlock_fiber_start, .-airlock_fiber_start\n");
__attribute__((visibility("hidden"))) void airlock_fiber_switch(void **save, void *load);
__attribute__((visibility("hidden"))) void airlock_fiber_start(void);
#define FIBER_ASM 1
#endif

static void fiber_body(struct fiber *f);

static void uc_entry(void)
{
	fiber_body(self->cur);
}

#ifdef FIBER_ASM
static void asm_entry(void *p)
{
	fiber_body(p);
}
#endif

/* ASan keeps a shadow of each stack: it is told of every switch, or it
 * reports the fiber's frames as overflows of the thread's stack. */
static void to_fiber(struct worker *w, struct fiber *f)
{
#ifdef FIBER_ASAN
	__sanitizer_start_switch_fiber(&w->asan_fake, f->map + FIBER_GUARD, FIBER_STACK);
#endif
	w->cur = f;
#ifdef FIBER_ASM
	if (!with_ucontext)
		airlock_fiber_switch(&w->sp, f->sp);
	else
#endif
		swapcontext(&w->uc, &f->uc);
	w->cur = NULL;
#ifdef FIBER_ASAN
	__sanitizer_finish_switch_fiber(w->asan_fake, NULL, NULL);
#endif
}

static void to_worker(struct fiber *f)
{
	struct worker *w = f->w;
#ifdef FIBER_ASAN
	/* An ending fiber's fake stack goes with it. */
	__sanitizer_start_switch_fiber(f->done ? NULL : &f->asan_fake, w->asan_bottom, w->asan_size);
#endif
#ifdef FIBER_ASM
	if (!with_ucontext)
		airlock_fiber_switch(&f->sp, w->sp);
	else
#endif
		swapcontext(&f->uc, &w->uc);
#ifdef FIBER_ASAN
	__sanitizer_finish_switch_fiber(f->asan_fake, NULL, NULL);
#endif
}

static void fiber_body(struct fiber *f)
{
#ifdef FIBER_ASAN
	__sanitizer_finish_switch_fiber(NULL, &f->w->asan_bottom, &f->w->asan_size);
#endif
	f->fn(f->arg);
	f->done = true;
	to_worker(f);
	abort(); /* an ended fiber is never switched to */
}

static int stack_prepare(struct fiber *f)
{
	if (!f->map) {
		void *m = mmap(NULL, FIBER_GUARD + FIBER_STACK, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
		if (m == MAP_FAILED)
			return -ENOMEM;
		/* An overflow faults instead of writing over the next
		 * mapping. */
		if (mprotect(m, FIBER_GUARD, PROT_NONE) < 0) {
			munmap(m, FIBER_GUARD + FIBER_STACK);
			return -ENOMEM;
		}
		f->map = m;
	}
#ifdef FIBER_ASM
	if (!with_ucontext) {
		uintptr_t top = ((uintptr_t)f->map + FIBER_GUARD + FIBER_STACK) & ~(uintptr_t)15;
		uint64_t *sp = (uint64_t *)(top - 16 - 64);
		/* As the switch pops them: control words (MXCSR's default,
		 * x87's default), r15, r14, r13 (the argument), r12 (the
		 * entry), rbx, rbp, the return address. */
		sp[0] = 0x1f80 | ((uint64_t)0x037f << 32);
		sp[1] = 0;
		sp[2] = 0;
		sp[3] = (uint64_t)(uintptr_t)f;
		sp[4] = (uint64_t)(uintptr_t)asm_entry;
		sp[5] = 0;
		sp[6] = 0;
		sp[7] = (uint64_t)(uintptr_t)airlock_fiber_start;
		f->sp = sp;
		return 0;
	}
#endif
	if (getcontext(&f->uc) < 0)
		return -errno;
	f->uc.uc_stack.ss_sp = f->map + FIBER_GUARD;
	f->uc.uc_stack.ss_size = FIBER_STACK;
	f->uc.uc_link = NULL;
	makecontext(&f->uc, uc_entry, 0);
	return 0;
}

/* ---- the run queue and the deadlines ---- */

static void make_ready(struct worker *w, struct fiber *f)
{
	if (f->queued)
		return;
	f->queued = true;
	f->next = NULL;
	if (w->ready_tail)
		w->ready_tail->next = f;
	else
		w->ready = f;
	w->ready_tail = f;
}

static struct fiber *pop_ready(struct worker *w)
{
	struct fiber *f = w->ready;
	if (f) {
		w->ready = f->next;
		if (!w->ready)
			w->ready_tail = NULL;
		f->queued = false;
	}
	return f;
}

static void heap_swap(struct worker *w, size_t a, size_t b)
{
	struct fiber *t = w->heap[a];
	w->heap[a] = w->heap[b];
	w->heap[b] = t;
	w->heap[a]->heap_i = a;
	w->heap[b]->heap_i = b;
}

static void heap_sift(struct worker *w, size_t i)
{
	while (i > 0 && w->heap[(i - 1) / 2]->deadline > w->heap[i]->deadline) {
		heap_swap(w, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < w->heap_n && w->heap[l]->deadline < w->heap[m]->deadline)
			m = l;
		if (r < w->heap_n && w->heap[r]->deadline < w->heap[m]->deadline)
			m = r;
		if (m == i)
			return;
		heap_swap(w, i, m);
		i = m;
	}
}

static int heap_add(struct worker *w, struct fiber *f)
{
	if (w->heap_n == w->heap_cap) {
		size_t cap = w->heap_cap ? 2 * w->heap_cap : 64;
		struct fiber **h = realloc(w->heap, cap * sizeof(*h));
		if (!h)
			return -ENOMEM;
		w->heap = h;
		w->heap_cap = cap;
	}
	f->heap_i = w->heap_n;
	w->heap[w->heap_n++] = f;
	heap_sift(w, f->heap_i);
	return 0;
}

static void heap_remove(struct worker *w, struct fiber *f)
{
	size_t i = f->heap_i;
	if (i == SIZE_MAX)
		return;
	f->heap_i = SIZE_MAX;
	if (i != --w->heap_n) {
		w->heap[i] = w->heap[w->heap_n];
		w->heap[i]->heap_i = i;
		heap_sift(w, i);
	}
}

/* ---- fibers ---- */

static struct fiber *fiber_new(struct worker *w, fiber_fn fn, void *arg)
{
	struct fiber *f = w->cache;
	if (f) {
		w->cache = f->next;
		w->n_cache--;
	} else {
		f = calloc(1, sizeof(*f));
		if (!f)
			return NULL;
		f->slot = UINT32_MAX;
	}
	if (f->slot == UINT32_MAX) {
		if (w->n_free_slots) {
			f->slot = w->free_slots[--w->n_free_slots];
		} else {
			if (w->n_slots == w->cap_slots) {
				uint32_t cap = w->cap_slots ? 2 * w->cap_slots : 64;
				struct fiber **s = realloc(w->slots, cap * sizeof(*s));
				uint32_t *fs = s ? realloc(w->free_slots, cap * sizeof(*fs)) : NULL;
				if (s)
					w->slots = s;
				if (fs)
					w->free_slots = fs;
				if (!s || !fs || cap > TAG_OWNED >> 16)
					goto fail;
				w->cap_slots = cap;
			}
			f->slot = w->n_slots++;
		}
		w->slots[f->slot] = f;
	}
	f->w = w;
	f->fn = fn;
	f->arg = arg;
	f->done = f->waiting = f->queued = false;
	f->heap_i = SIZE_MAX;
	f->gen++;
	for (size_t i = 0; i < FIBER_TIMEOUTS; i++)
		f->timeouts[i].fd = -1;
	for (size_t i = 0; i < FIBER_ARMED; i++)
		f->armed[i] = -1;
	f->life++;
	for (size_t i = 0; i < FIBER_OWNED; i++)
		f->owned[i].fd = -1;
	f->asan_fake = NULL;
	if (stack_prepare(f) == 0)
		return f;
fail:
	if (f->map)
		munmap(f->map, FIBER_GUARD + FIBER_STACK);
	if (f->slot != UINT32_MAX) {
		w->slots[f->slot] = NULL;
		w->free_slots[w->n_free_slots++] = f->slot;
	}
	free(f);
	return NULL;
}

static void fiber_end(struct worker *w, struct fiber *f)
{
	/* Kept with its slot and stack for the next connection; the
	 * generation moves on, so a late event for this one is dropped. */
	f->gen++;
	if (w->n_cache < FIBER_CACHE) {
		f->next = w->cache;
		w->cache = f;
		w->n_cache++;
		return;
	}
	w->slots[f->slot] = NULL;
	w->free_slots[w->n_free_slots++] = f->slot;
	munmap(f->map, FIBER_GUARD + FIBER_STACK);
	free(f);
}

static bool spawn_here(struct worker *w, fiber_fn fn, void *arg)
{
	struct fiber *f = fiber_new(w, fn, arg);
	if (!f)
		return false;
	make_ready(w, f);
	return true;
}

bool fiber_spawn_on(unsigned index, fiber_fn fn, void *arg)
{
	if (!self)
		return false;
	struct worker *w = &workers[index % n_workers];
	if (w == self)
		return spawn_here(w, fn, arg);
	struct pending *p = malloc(sizeof(*p));
	if (!p)
		return false;
	p->fn = fn;
	p->arg = arg;
	pthread_mutex_lock(&w->lock);
	p->next = w->queue;
	w->queue = p;
	pthread_mutex_unlock(&w->lock);
	uint64_t one = 1;
	(void)!write(w->wake, &one, sizeof(one));
	return true;
}

unsigned fiber_workers(void)
{
	return n_workers ? n_workers : 1;
}

/* ---- waiting ---- */

/* Arm fd for one event of this wait. ADD or MOD as the fiber believes,
 * the other when the kernel disagrees (an fd closed and its number
 * reused, or one armed before this fiber had it). */
static int arm(struct worker *w, struct fiber *f, int fd, short events)
{
	struct epoll_event ev = { .events = (uint32_t)events | EPOLLONESHOT,
				  .data.u64 = (uint64_t)(uint32_t)fd << 32 | (uint64_t)f->slot << 16 | f->gen };
	size_t i, hole = FIBER_ARMED;
	for (i = 0; i < FIBER_ARMED && f->armed[i] != fd; i++)
		if (f->armed[i] < 0 && hole == FIBER_ARMED)
			hole = i;
	int op = i < FIBER_ARMED ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
	int r = epoll_ctl(w->ep, op, fd, &ev);
	if (r < 0 && (errno == ENOENT || errno == EEXIST)) {
		op = op == EPOLL_CTL_MOD ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
		r = epoll_ctl(w->ep, op, fd, &ev);
	}
	if (r < 0)
		return -errno;
	if (i == FIBER_ARMED)
		f->armed[hole < FIBER_ARMED ? hole : (size_t)fd % FIBER_ARMED] = fd;
	return 0;
}

static uint64_t owned_tag(const struct fiber *f, int fd)
{
	return (uint64_t)(uint32_t)fd << 32 | TAG_OWNED | (uint64_t)f->slot << 16 | f->life;
}

static int owned_index(const struct fiber *f, int fd)
{
	for (int i = 0; i < FIBER_OWNED; i++)
		if (f->owned[i].fd == fd)
			return i;
	return -1;
}

/* What a wait for `events` on owned fd i may report without parking: the
 * bits that came while nobody waited, as poll(2) revents (an end of the
 * peer's writing is readable). Bits reported are taken, but for the ones
 * that stay. The first wait adds the fd; the kernel then queues an edge
 * for whatever is ready already. */
static int arm_owned(struct worker *w, struct fiber *f, int i, short events, short *revents)
{
	uint32_t *pend = &f->owned[i].pending;
	if (!f->owned[i].added) {
		int fd = f->owned[i].fd;
		struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
					  .data.u64 = owned_tag(f, fd) };
		int r = epoll_ctl(w->ep, EPOLL_CTL_ADD, fd, &ev);
		if (r < 0 && errno == EEXIST)
			r = epoll_ctl(w->ep, EPOLL_CTL_MOD, fd, &ev);
		if (r < 0)
			return -errno;
		f->owned[i].added = true;
	}
	uint32_t want = (uint32_t)events | EPOLLHUP | EPOLLERR;
	uint32_t have = *pend & (want | EPOLLRDHUP);
	if (have & EPOLLRDHUP)
		have = (have & ~(uint32_t)EPOLLRDHUP) | ((uint32_t)events & (POLLIN | POLLRDHUP));
	*pend &= ~(have & ~(uint32_t)OWNED_STICKY);
	*revents = (short)have;
	return 0;
}

/* Park the fiber until one of fds has an event or timeout_ms passes. */
static int park(struct worker *w, struct fiber *f, struct pollfd *fds, nfds_t n, int timeout_ms)
{
	f->gen++;
	int now_ready = 0;
	for (nfds_t i = 0; i < n; i++) {
		fds[i].revents = 0;
		if (fds[i].fd < 0)
			continue;
		int o = owned_index(f, fds[i].fd);
		int r = o >= 0 ? arm_owned(w, f, o, fds[i].events, &fds[i].revents) :
				 arm(w, f, fds[i].fd, fds[i].events);
		if (r == 0 && fds[i].revents) {
			now_ready++;
			continue;
		}
		if (r == -EBADF) {
			fds[i].revents = POLLNVAL;
			now_ready++;
		} else if (r == -EPERM) {
			/* A file epoll cannot watch is always ready, as
			 * poll(2) says of it. */
			fds[i].revents = (short)(fds[i].events & (POLLIN | POLLOUT));
			now_ready += fds[i].revents != 0;
		} else if (r < 0) {
			errno = -r;
			return -1;
		}
	}
	if (now_ready) {
		f->gen++; /* the armed fds' events, if any come, are late */
		return now_ready;
	}
	f->pfds = fds;
	f->npfds = n;
	f->nready = 0;
	f->waiting = true;
	if (timeout_ms > 0) {
		f->deadline = clock_mono_ns() + (int64_t)timeout_ms * 1000000;
		if (heap_add(w, f) < 0) {
			f->waiting = false;
			errno = ENOMEM;
			return -1;
		}
	}
	to_worker(f);
	f->waiting = false;
	f->gen++;
	return f->nready;
}

int fiber_poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
	struct worker *w = self;
	struct fiber *f = w ? w->cur : NULL;
	if (!f || timeout_ms == 0)
		return poll(fds, n, timeout_ms);
	/* A relay's next look usually finds bytes waiting: one poll(2)
	 * then, instead of arming each fd and a trip through the loop. */
	int r = poll(fds, n, 0);
	if (r != 0)
		return r;
	return park(w, f, fds, n, timeout_ms);
}

/* After a call said EAGAIN: no look first, the fd is armed at once. */
int fiber_wait(int fd, short events, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	struct worker *w = self;
	struct fiber *f = w ? w->cur : NULL;
	int r = f && timeout_ms != 0 ? park(w, f, &p, 1, timeout_ms) : poll(&p, 1, timeout_ms);
	if (r < 0)
		return -errno;
	return r ? (p.revents ? p.revents : POLLERR) : 0;
}

void fiber_sleep(int ms)
{
	if (ms <= 0)
		return;
	if (self && self->cur)
		(void)fiber_poll(NULL, 0, ms);
	else
		(void)poll(NULL, 0, ms);
}

void fiber_yield(void)
{
	struct worker *w = self;
	struct fiber *f = w ? w->cur : NULL;
	if (!f)
		return;
	/* Not the run queue: the loop runs that empty before it looks at
	 * epoll, and a fiber that always yields would keep it from looking. */
	f->queued = true;
	f->next = w->yielded;
	w->yielded = f;
	to_worker(f);
}

/* An event for (fd, slot, generation): delivered only to the wait that
 * armed it. */
static void deliver_owned(struct worker *w, uint64_t data, uint32_t events)
{
	int fd = (int)(data >> 32);
	uint32_t slot = (uint32_t)(data >> 16) & ((TAG_OWNED >> 16) - 1);
	struct fiber *f = slot < w->n_slots ? w->slots[slot] : NULL;
	if (!f || f->done || f->life != (uint16_t)data)
		return;
	int o = owned_index(f, fd);
	if (o < 0 || !f->owned[o].added)
		return; /* closed, or a number owned again but not yet added */
	f->owned[o].pending |= events;
	if (!f->waiting)
		return;
	for (nfds_t i = 0; i < f->npfds; i++)
		if (f->pfds[i].fd == fd) {
			short got;
			if (arm_owned(w, f, o, f->pfds[i].events, &got) == 0 && got) {
				if (!f->pfds[i].revents)
					f->nready++;
				f->pfds[i].revents |= got;
			}
		}
	if (f->nready) {
		heap_remove(w, f);
		make_ready(w, f);
	}
}

static void deliver(struct worker *w, uint64_t data, uint32_t events)
{
	if (data & TAG_OWNED) {
		deliver_owned(w, data, events);
		return;
	}
	int fd = (int)(data >> 32);
	uint32_t slot = (uint32_t)(data >> 16) & 0xffff;
	uint16_t gen = (uint16_t)data;
	struct fiber *f = slot < w->n_slots ? w->slots[slot] : NULL;
	if (!f || !f->waiting || f->gen != gen)
		return;
	for (nfds_t i = 0; i < f->npfds; i++)
		if (f->pfds[i].fd == fd) {
			short got = (short)(events & ((uint32_t)f->pfds[i].events | POLLERR | POLLHUP | POLLNVAL));
			if (got && !f->pfds[i].revents)
				f->nready++;
			f->pfds[i].revents |= got;
		}
	if (f->nready) {
		heap_remove(w, f);
		make_ready(w, f);
	}
}

/* ---- timeouts on fds ---- */

void fiber_io_timeout_set(int fd, int ms)
{
	struct fiber *f = self ? self->cur : NULL;
	if (!f) {
		struct timeval tv = { .tv_sec = ms < 0 ? 0 : ms / 1000, .tv_usec = ms < 0 ? 0 : (ms % 1000) * 1000 };
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		return;
	}
	size_t hole = FIBER_TIMEOUTS;
	for (size_t i = 0; i < FIBER_TIMEOUTS; i++) {
		if (f->timeouts[i].fd == fd) {
			f->timeouts[i].ms = ms;
			return;
		}
		if (f->timeouts[i].fd < 0 && hole == FIBER_TIMEOUTS)
			hole = i;
	}
	/* Full: the fd's number picks the entry it replaces. */
	size_t i = hole < FIBER_TIMEOUTS ? hole : (size_t)fd % FIBER_TIMEOUTS;
	f->timeouts[i].fd = fd;
	f->timeouts[i].ms = ms;
}

int fiber_io_timeout(int fd)
{
	struct fiber *f = self ? self->cur : NULL;
	for (size_t i = 0; f && i < FIBER_TIMEOUTS; i++)
		if (f->timeouts[i].fd == fd)
			return f->timeouts[i].ms;
	return -1;
}

bool fiber_again(int fd, short events)
{
	if (errno == EINTR)
		return true;
	if (errno != EAGAIN)
		return false;
	if (fiber_wait(fd, events, fiber_io_timeout(fd)) > 0)
		return true;
	errno = EAGAIN;
	return false;
}

ssize_t fiber_read(int fd, void *p, size_t n)
{
	ssize_t r;
	while ((r = read(fd, p, n)) < 0 && fiber_again(fd, POLLIN))
		;
	/* A full buffer may have left bytes behind, and no edge will come
	 * for them: the next wait on an owned fd must not park. */
	struct fiber *f = self ? self->cur : NULL;
	int o = f && r > 0 && (size_t)r == n ? owned_index(f, fd) : -1;
	if (o >= 0)
		f->owned[o].pending |= EPOLLIN;
	return r;
}

ssize_t fiber_send(int fd, const void *p, size_t n, int flags)
{
	ssize_t r;
	while ((r = send(fd, p, n, flags)) < 0 && fiber_again(fd, POLLOUT))
		;
	return r;
}

int fiber_connect(int fd, const struct sockaddr *sa, socklen_t len, int timeout_ms)
{
	if (connect(fd, sa, len) == 0)
		return 0;
	if (errno != EINPROGRESS && errno != EINTR)
		return -errno;
	int r = fiber_wait(fd, POLLOUT, timeout_ms);
	if (r == 0)
		return -ETIMEDOUT;
	if (r < 0)
		return r;
	int e = 0;
	socklen_t elen = sizeof(e);
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &elen) < 0)
		return -errno;
	return -e;
}

/* ---- fds a fiber keeps ---- */

void fiber_fd_own(int fd)
{
	struct fiber *f = self ? self->cur : NULL;
	if (!f || fd < 0)
		return;
	int i = owned_index(f, fd);
	for (int j = 0; i < 0 && j < FIBER_OWNED; j++)
		if (f->owned[j].fd < 0)
			i = j;
	if (i < 0)
		return; /* full: this fd is armed per wait, as any other */
	/* A number owned before was closed: this is a new file, to add. */
	f->owned[i].fd = fd;
	f->owned[i].added = false;
	f->owned[i].pending = 0;
}

int fiber_fd_close(int fd)
{
	struct fiber *f = self ? self->cur : NULL;
	int i = f ? owned_index(f, fd) : -1;
	if (i >= 0)
		f->owned[i].fd = -1;
	return close(fd);
}

/* ---- a blocking call on a thread of its own ---- */

struct blocking {
	void (*fn)(void *);
	void *arg;
	int done;
};

static void *blocking_main(void *p)
{
	struct blocking *b = p;
	b->fn(b->arg);
	uint64_t one = 1;
	/* The last touch of b: the fiber may free it once this is read. */
	(void)!write(b->done, &one, sizeof(one));
	return NULL;
}

void fiber_run_blocking(void (*fn)(void *), void *arg)
{
	if (!self || !self->cur) {
		fn(arg);
		return;
	}
	struct blocking b = { .fn = fn, .arg = arg, .done = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK) };
	pthread_t t;
	pthread_attr_t attr;
	if (b.done < 0 || pthread_attr_init(&attr) != 0) {
		if (b.done >= 0)
			close(b.done);
		fn(arg);
		return;
	}
	pthread_attr_setstacksize(&attr, 256 * 1024);
	int r = pthread_create(&t, &attr, blocking_main, &b);
	pthread_attr_destroy(&attr);
	if (r != 0) {
		close(b.done);
		fn(arg);
		return;
	}
	uint64_t v;
	while (read(b.done, &v, sizeof(v)) != sizeof(v))
		(void)fiber_wait(b.done, POLLIN, -1);
	pthread_join(t, NULL);
	close(b.done);
}

/* ---- the workers ---- */

static void take_queue(struct worker *w)
{
	uint64_t v;
	(void)!read(w->wake, &v, sizeof(v));
	pthread_mutex_lock(&w->lock);
	struct pending *p = w->queue;
	w->queue = NULL;
	pthread_mutex_unlock(&w->lock);
	/* Pushed newest first: started oldest first. */
	struct pending *rev = NULL;
	while (p) {
		struct pending *next = p->next;
		p->next = rev;
		rev = p;
		p = next;
	}
	while (rev) {
		struct pending *next = rev->next;
		if (!spawn_here(w, rev->fn, rev->arg))
			rev->fn(rev->arg); /* out of memory: run it on the loop's own stack */
		free(rev);
		rev = next;
	}
}

static void first_fiber(void *arg)
{
	struct worker *w = arg;
	w->first(w->index, w->first_arg);
}

static void *worker_loop(void *arg)
{
	struct worker *w = arg;
	self = w;
	if (!spawn_here(w, first_fiber, w))
		abort();
	struct epoll_event evs[EV_BATCH];
	for (;;) {
		struct fiber *f;
		while ((f = pop_ready(w))) {
			to_fiber(w, f);
			if (f->done)
				fiber_end(w, f);
		}
		if (atomic_load(&quitting))
			return NULL;
		if (idle_hook)
			idle_hook();
		int timeout = w->yielded ? 0 : -1;
		if (w->heap_n && timeout) {
			int64_t left = w->heap[0]->deadline - clock_mono_ns();
			timeout = left <= 0 ? 0 : (int)((left + 999999) / 1000000);
		}
		int n = epoll_wait(w->ep, evs, EV_BATCH, timeout);
		for (int i = 0; i < n; i++) {
			if (evs[i].data.u64 == TAG_WAKE)
				take_queue(w);
			else
				deliver(w, evs[i].data.u64, evs[i].events);
		}
		int64_t now = clock_mono_ns();
		while (w->heap_n && w->heap[0]->deadline <= now) {
			f = w->heap[0];
			heap_remove(w, f);
			make_ready(w, f); /* nready 0: the timeout */
		}
		while ((f = w->yielded)) {
			w->yielded = f->next;
			f->queued = false;
			make_ready(w, f);
		}
	}
	return NULL;
}

/* Shadow stacks (CET) would refuse the assembly switch's returns into a
 * new stack; glibc's ucontext knows how to make them. */
static bool shadow_stack_on(void)
{
#if defined(__x86_64__)
	unsigned long features = 0;
	if (syscall(SYS_arch_prctl, 0x5005 /* ARCH_SHSTK_STATUS */, &features) == 0)
		return (features & 1) != 0;
#endif
	return false;
}

void fiber_force_ucontext(bool on)
{
	with_ucontext = on;
}

static unsigned cpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

void fiber_set_idle(void (*idle)(void))
{
	idle_hook = idle;
}

void fiber_wake_all(void)
{
	/* Only write(2): a signal handler may call this. */
	for (unsigned i = 0; i < n_workers; i++) {
		uint64_t one = 1;
		(void)!write(workers[i].wake, &one, sizeof(one));
	}
}

void fiber_quit(void)
{
	atomic_store(&quitting, true);
	for (unsigned i = 0; i < n_workers; i++) {
		uint64_t one = 1;
		(void)!write(workers[i].wake, &one, sizeof(one));
	}
}

/* After fiber_quit: every fiber's stack, parked or not, and the loop's
 * own state. What a parked fiber owned is its caller's to know about. */
static void teardown(unsigned count)
{
	for (unsigned i = 0; i < count; i++) {
		struct worker *w = &workers[i];
		for (uint32_t s = 0; s < w->n_slots; s++)
			if (w->slots[s]) {
				munmap(w->slots[s]->map, FIBER_GUARD + FIBER_STACK);
				free(w->slots[s]);
			}
		for (struct pending *p = w->queue, *next; p; p = next) {
			next = p->next;
			free(p);
		}
		free(w->slots);
		free(w->free_slots);
		free(w->heap);
		if (w->ep >= 0)
			close(w->ep);
		if (w->wake >= 0)
			close(w->wake);
		pthread_mutex_destroy(&w->lock);
	}
	free(workers);
	workers = NULL;
	n_workers = 0;
	self = NULL;
	atomic_store(&quitting, false);
}

int fiber_main(unsigned count, void (*first)(unsigned, void *), void *arg, struct error *err)
{
#ifndef FIBER_ASM
	with_ucontext = true;
#endif
	if (shadow_stack_on())
		with_ucontext = true;
	if (!count)
		count = cpus();
	if (count > FIBER_MAX_WORKERS)
		count = FIBER_MAX_WORKERS;
	workers = calloc(count, sizeof(*workers));
	if (!workers)
		return error_set(err, ENOMEM, "out of memory");
	pthread_t threads[FIBER_MAX_WORKERS];
	unsigned started = 0;
	int r = 0;
	for (unsigned i = 0; i < count; i++) {
		struct worker *w = &workers[i];
		w->index = i;
		w->first = first;
		w->first_arg = arg;
		pthread_mutex_init(&w->lock, NULL);
		w->ep = epoll_create1(EPOLL_CLOEXEC);
		w->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = TAG_WAKE };
		if (r == 0 && (w->ep < 0 || w->wake < 0 || epoll_ctl(w->ep, EPOLL_CTL_ADD, w->wake, &ev) < 0))
			r = error_set(err, errno, "cannot make the event loop: %s", strerror(errno));
	}
	n_workers = count;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (unsigned i = 1; r == 0 && i < count; i++) {
		int e = pthread_create(&threads[i], &attr, worker_loop, &workers[i]);
		if (e != 0)
			r = error_set(err, e, "cannot start an event loop thread: %s", strerror(e));
		else
			started = i;
	}
	pthread_attr_destroy(&attr);
	if (r == 0)
		worker_loop(&workers[0]);
	else
		fiber_quit();
	for (unsigned i = 1; i <= started; i++)
		pthread_join(threads[i], NULL);
	teardown(count);
	return r;
}
