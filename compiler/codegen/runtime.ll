; The process-wide runtime of JIT-compiled modules: a persistent thread pool
; and an allocator that keeps freed buffers of 64 KiB or more for reuse.
; `compiler/codegen/runtime.py` compiles this once per process and exports its
; functions to every JIT module. Shared state is guarded by pthread mutexes
; and condition variables, initialised by `__dfc_runtime_init` before first use
; (no libc's static initialiser layout is assumed; 64 bytes hold a mutex or a
; condition variable on glibc, musl and macOS); it has external linkage, so
; LLVM assumes calls may touch it. The spin loop's x86 `pause` hint is removed
; by runtime.py on other targets.

@__dfc_pool_mu = global [64 x i8] zeroinitializer, align 16
@__dfc_pool_work = global [64 x i8] zeroinitializer, align 16    ; cond: a job was posted
@__dfc_pool_idle = global [64 x i8] zeroinitializer, align 16    ; cond: the job's last chunk finished
@__dfc_pool_submit = global [64 x i8] zeroinitializer, align 16  ; held while a job runs
@__dfc_pool_workers = global i64 0
@__dfc_pool_generation = global i64 0
@__dfc_pool_parked = global i64 0        ; nonzero: idle threads sleep instead of spinning
@__dfc_job_body = global ptr null
@__dfc_job_ctx = global ptr null
@__dfc_job_lb = global i64 0
@__dfc_job_ub = global i64 0
@__dfc_job_span = global i64 0
@__dfc_job_nchunks = global i64 0
@__dfc_job_next = global i64 0, align 64    ; the job's tag (low 32 bits of its generation) << 32 | next chunk
@__dfc_job_done = global i64 0, align 64    ; chunks of the job finished
@__dfc_gomp_parallel = global ptr null   ; GOMP_parallel of an OpenMP runtime the process shares (runtime.use_openmp)
@__dfc_job_cpu = global i64 -1           ; the CPU the job's caller was on when it posted it (-1: unknown)
@__dfc_worker_cpu = global i64 -1        ; the CPU the last worker to finish a job's chunks was on
@__dfc_pool_sleepers = global i64 0      ; workers waiting on __dfc_pool_work (under __dfc_pool_mu)
@__dfc_getcpu = global ptr null          ; libc's sched_getcpu, sched_getaffinity and sched_setaffinity where
@__dfc_getaffinity = global ptr null     ; they exist (set by runtime.py; null elsewhere: workers stay where
@__dfc_setaffinity = global ptr null     ; the scheduler wakes them)
@__dfc_cpus = global i64 0               ; CPUs the process may run on (set with the three above)

@__dfc_cache_mu = global [64 x i8] zeroinitializer, align 16
@__dfc_cache_ptr = global [64 x ptr] zeroinitializer
@__dfc_cache_size = global [64 x i64] zeroinitializer
@__dfc_cache_bytes = global i64 0
@__dfc_cache_limit = global i64 1073741824

declare i32 @pthread_mutex_init(ptr, ptr)
declare i32 @pthread_cond_init(ptr, ptr)
declare i32 @pthread_mutex_lock(ptr)
declare i32 @pthread_mutex_trylock(ptr)
declare i32 @pthread_mutex_unlock(ptr)
declare i32 @pthread_cond_wait(ptr, ptr)
declare i32 @pthread_cond_broadcast(ptr)
declare i32 @pthread_create(ptr, ptr, ptr, ptr)
declare i32 @pthread_detach(i64)
declare ptr @aligned_alloc(i64, i64)
declare void @free(ptr)
declare i32 @madvise(ptr, i64, i32)
declare i32 @sched_yield()

; Initialise the mutexes and condition variables (once, before anything else runs).
define void @__dfc_runtime_init() nounwind {
entry:
  call i32 @pthread_mutex_init(ptr @__dfc_pool_mu, ptr null)
  call i32 @pthread_mutex_init(ptr @__dfc_pool_submit, ptr null)
  call i32 @pthread_mutex_init(ptr @__dfc_cache_mu, ptr null)
  call i32 @pthread_cond_init(ptr @__dfc_pool_work, ptr null)
  call i32 @pthread_cond_init(ptr @__dfc_pool_idle, ptr null)
  ret void
}

; ---------------------------------------------------------------------------
; Thread pool

; Run chunks of a job until none is left: chunk k covers
; [lb + k*span, min(lb + (k+1)*span, ub)). The word at %next holds the job's
; tag (its high 32 bits) and the next chunk (the low ones): a chunk is claimed
; by a compare-and-swap that fails once another job (tag) is posted, so a
; thread that took a job late never runs a later job's chunks with this
; one's bounds, and only threads that claimed a chunk hold up the caller.
; Each finished chunk counts in %done; true when this thread finished the
; job's last chunk.
define internal i1 @run_chunks(ptr %body, ptr %ctx, i64 %lb, i64 %ub, i64 %span, i64 %nchunks, ptr %next,
                               i64 %tag, ptr %done) nounwind {
entry:
  br label %claim
claim:
  %last = phi i1 [ false, %entry ], [ %last, %take ], [ %fin, %ran ]
  %w = load atomic i64, ptr %next seq_cst, align 8
  %wtag = lshr i64 %w, 32
  %k = and i64 %w, 4294967295
  %ours = icmp eq i64 %wtag, %tag
  %left = icmp ult i64 %k, %nchunks
  %more = and i1 %ours, %left
  br i1 %more, label %take, label %out
take:
  %w1 = add i64 %w, 1
  %pair = cmpxchg ptr %next, i64 %w, i64 %w1 seq_cst seq_cst
  %got = extractvalue { i64, i1 } %pair, 1
  br i1 %got, label %run, label %claim
run:
  %off = mul i64 %k, %span
  %lo = add i64 %lb, %off
  %rest = sub i64 %ub, %lo
  %short = icmp slt i64 %span, %rest
  %lo.span = add i64 %lo, %span
  %hi = select i1 %short, i64 %lo.span, i64 %ub
  call void %body(ptr %ctx, i64 %lo, i64 %hi)
  %d = atomicrmw add ptr %done, i64 1 seq_cst
  %d1 = add i64 %d, 1
  %fin = icmp eq i64 %d1, %nchunks
  br label %ran
ran:
  br label %claim
out:
  ret i1 %last
}

; A worker waits until the generation differs from the last it saw (at
; first, the one before the job it was started for), then claims the job's
; chunks; the one finishing the last chunk wakes the caller if it sleeps.
define internal ptr @worker(ptr %start) nounwind {
entry:
  %seen = alloca i64
  %g0 = ptrtoint ptr %start to i64
  store i64 %g0, ptr %seen
  call i32 @pthread_mutex_lock(ptr @__dfc_pool_mu)
  br label %wait
wait:
  %g = load atomic i64, ptr @__dfc_pool_generation seq_cst, align 8
  %s = load i64, ptr %seen
  %same = icmp eq i64 %g, %s
  br i1 %same, label %spin, label %take
spin:
  call i32 @pthread_mutex_unlock(ptr @__dfc_pool_mu)
  call void @spin_while(ptr @__dfc_pool_generation, i64 %s, i1 true)
  call i32 @pthread_mutex_lock(ptr @__dfc_pool_mu)
  %g2 = load atomic i64, ptr @__dfc_pool_generation seq_cst, align 8
  %still = icmp eq i64 %g2, %s
  br i1 %still, label %sleep, label %wait
sleep:
  %z = load i64, ptr @__dfc_pool_sleepers
  %z1 = add i64 %z, 1
  store i64 %z1, ptr @__dfc_pool_sleepers
  call i32 @pthread_cond_wait(ptr @__dfc_pool_work, ptr @__dfc_pool_mu)
  %y = load i64, ptr @__dfc_pool_sleepers
  %y1 = sub i64 %y, 1
  store i64 %y1, ptr @__dfc_pool_sleepers
  br label %wait
take:
  store i64 %g, ptr %seen
  %tag = and i64 %g, 4294967295
  %body = load ptr, ptr @__dfc_job_body
  %ctx = load ptr, ptr @__dfc_job_ctx
  %lb = load i64, ptr @__dfc_job_lb
  %ub = load i64, ptr @__dfc_job_ub
  %span = load i64, ptr @__dfc_job_span
  %nchunks = load i64, ptr @__dfc_job_nchunks
  call i32 @pthread_mutex_unlock(ptr @__dfc_pool_mu)
  call void @__dfc_leave_shared_cpu()
  %last = call i1 @run_chunks(ptr %body, ptr %ctx, i64 %lb, i64 %ub, i64 %span, i64 %nchunks, ptr @__dfc_job_next,
                              i64 %tag, ptr @__dfc_job_done)
  %there = call i64 @current_cpu()
  store atomic i64 %there, ptr @__dfc_worker_cpu monotonic, align 8
  call i32 @pthread_mutex_lock(ptr @__dfc_pool_mu)
  br i1 %last, label %signal, label %wait
signal:
  call i32 @pthread_cond_broadcast(ptr @__dfc_pool_idle)
  br label %wait
}

; The CPU the calling thread runs on, or -1 where that is not known.
define internal i64 @current_cpu() nounwind {
entry:
  %get = load ptr, ptr @__dfc_getcpu
  %none = icmp eq ptr %get, null
  br i1 %none, label %unknown, label %ask
ask:
  %c = call i32 %get()
  %c64 = sext i32 %c to i64
  ret i64 %c64
unknown:
  ret i64 -1
}

; Called by a worker taking a job: if it runs on the CPU the job's caller was
; on, move it to another CPU it may run on (its affinity without that CPU,
; then the whole of it again, so that it is not pinned). On KVM guests the
; scheduler wakes a sleeping thread on its waker's CPU when the other vCPUs
; are halted (it takes them for preempted): a worker woken by the caller, or
; the caller woken by the last worker, and the two then share one CPU from
; call to call.
define void @__dfc_leave_shared_cpu() nounwind {
entry:
  %set = alloca [16 x i64], align 64
  %mine = call i64 @current_cpu()
  %caller = load atomic i64, ptr @__dfc_job_cpu monotonic, align 8
  %known = icmp sge i64 %mine, 0
  %small = icmp ult i64 %mine, 1024
  %same = icmp eq i64 %mine, %caller
  %k1 = and i1 %known, %small
  %shared = and i1 %k1, %same
  ; with more threads than CPUs, sharing is unavoidable: stay
  %workers = load i64, ptr @__dfc_pool_workers
  %cpus = load i64, ptr @__dfc_cpus
  %fits = icmp ult i64 %workers, %cpus
  %leave = and i1 %shared, %fits
  br i1 %leave, label %read, label %done
read:
  %get = load ptr, ptr @__dfc_getaffinity
  %put = load ptr, ptr @__dfc_setaffinity
  %rc = call i32 %get(i32 0, i64 128, ptr %set)
  %ok = icmp eq i32 %rc, 0
  br i1 %ok, label %clear, label %done
clear:
  %word = lshr i64 %mine, 6
  %shift = and i64 %mine, 63
  %bit = shl i64 1, %shift
  %at = getelementptr i64, ptr %set, i64 %word
  %w = load i64, ptr %at
  %notbit = xor i64 %bit, -1
  %without = and i64 %w, %notbit
  store i64 %without, ptr %at
  %all = load <16 x i64>, ptr %set, align 64
  %any = call i64 @llvm.vector.reduce.or.v16i64(<16 x i64> %all)
  %others = icmp ne i64 %any, 0
  br i1 %others, label %move, label %done
move:
  call i32 %put(i32 0, i64 128, ptr %set)
  store i64 %w, ptr %at
  call i32 %put(i32 0, i64 128, ptr %set)
  br label %done
done:
  ret void
}

declare i64 @llvm.vector.reduce.or.v16i64(<16 x i64>)

; Spin (for about 0.1 ms at most) while (*%p == %v) == %same. Waking a
; sleeping thread takes long on virtual machines; between the back-to-back
; parallel loops of a time-step loop, workers and caller stay awake this way.
; The spin ends early once the pool is parked (`__dfc_pool_park`).
define internal void @spin_while(ptr %p, i64 %v, i1 %same) nounwind {
entry:
  br label %poll
poll:
  %i = phi i64 [ 0, %entry ], [ %i1, %pause ]
  %x = load atomic i64, ptr %p monotonic, align 8
  %eq = icmp eq i64 %x, %v
  %holds = icmp eq i1 %eq, %same
  %more = icmp ult i64 %i, 4096
  %parked = load atomic i64, ptr @__dfc_pool_parked monotonic, align 8
  %awake = icmp eq i64 %parked, 0
  %spin = and i1 %holds, %more
  %go = and i1 %spin, %awake
  br i1 %go, label %pause, label %done
pause:
  call void @llvm.x86.sse2.pause()
  %i1 = add i64 %i, 1
  br label %poll
done:
  ret void
}

declare void @llvm.x86.sse2.pause()

; Wait until the job's %nchunks chunks have all finished (spinning a while,
; then sleeping until the thread finishing the last one wakes this one).
define internal void @wait_done(i64 %nchunks) nounwind {
entry:
  %d = load atomic i64, ptr @__dfc_job_done seq_cst, align 8
  %over = icmp eq i64 %d, %nchunks
  br i1 %over, label %done, label %spin
spin:
  call void @spin_while(ptr @__dfc_job_done, i64 %nchunks, i1 false)
  call i32 @pthread_mutex_lock(ptr @__dfc_pool_mu)
  br label %check
check:
  %d2 = load atomic i64, ptr @__dfc_job_done seq_cst, align 8
  %over2 = icmp eq i64 %d2, %nchunks
  br i1 %over2, label %unlock, label %sleep
sleep:
  call i32 @pthread_cond_wait(ptr @__dfc_pool_idle, ptr @__dfc_pool_mu)
  br label %check
unlock:
  call i32 @pthread_mutex_unlock(ptr @__dfc_pool_mu)
  br label %done
done:
  ret void
}

; Make idle workers sleep now instead of spinning: called before handing the
; cores to another library's threads (a BLAS call), which spinning workers
; would slow down. The next parallel loop wakes them (and they spin again).
define void @__dfc_pool_park() nounwind {
entry:
  store atomic i64 1, ptr @__dfc_pool_parked monotonic, align 8
  ret void
}

; Nonzero when parallel loops run on a shared OpenMP team (`__dfc_gomp_parallel`).
define i64 @__dfc_openmp_shared() nounwind {
entry:
  %gomp = load atomic ptr, ptr @__dfc_gomp_parallel monotonic, align 8
  %set = icmp ne ptr %gomp, null
  %r = zext i1 %set to i64
  ret i64 %r
}

; The function each thread of an OpenMP team runs (`GOMP_parallel`'s fn):
; the chunks of the job at %job, { body, ctx, lb, ub, span, nchunks, next, done }
; (tag 0).
define internal void @omp_chunks(ptr %job) nounwind {
entry:
  %body = load ptr, ptr %job
  %f.ctx = getelementptr i64, ptr %job, i64 1
  %ctx = load ptr, ptr %f.ctx
  %f.lb = getelementptr i64, ptr %job, i64 2
  %lb = load i64, ptr %f.lb
  %f.ub = getelementptr i64, ptr %job, i64 3
  %ub = load i64, ptr %f.ub
  %f.span = getelementptr i64, ptr %job, i64 4
  %span = load i64, ptr %f.span
  %f.n = getelementptr i64, ptr %job, i64 5
  %nchunks = load i64, ptr %f.n
  %next = getelementptr i64, ptr %job, i64 6
  %done = getelementptr i64, ptr %job, i64 7
  call i1 @run_chunks(ptr %body, ptr %ctx, i64 %lb, i64 %ub, i64 %span, i64 %nchunks, ptr %next, i64 0, ptr %done)
  ret void
}

; body(ctx, lo, hi) over [lb, ub) by `step`, in chunks of at least
; `min_iters` iterations on at most
; `max_threads` threads, the caller's included. Serial on the caller when one
; chunk suffices, or when the pool is running another job (a concurrent
; caller, or a parallel loop inside a parallel body). With an OpenMP runtime
; shared (`__dfc_gomp_parallel` set), the chunks run on its team instead.
define void @__dfc_parallel_for(ptr %body, ptr %ctx, i64 %lb, i64 %ub, i64 %step, i64 %min_iters, i64 %max_threads) nounwind {
entry:
  %tid = alloca i64
  %job = alloca [8 x i64], align 8
  %nonempty = icmp slt i64 %lb, %ub
  br i1 %nonempty, label %size, label %done
size:
  %d = sub i64 %ub, %lb
  %d1 = sub i64 %d, 1
  %q = udiv i64 %d1, %step
  %trip = add i64 %q, 1
  %per.small = icmp slt i64 %min_iters, 1
  %per = select i1 %per.small, i64 1, i64 %min_iters
  %want = udiv i64 %trip, %per
  %capped = icmp ult i64 %want, %max_threads
  %nt = select i1 %capped, i64 %want, i64 %max_threads
  %one = icmp ule i64 %nt, 1
  br i1 %one, label %serial, label %split
split:
  %nt1 = sub i64 %nt, 1
  %t1 = add i64 %trip, %nt1
  %chunk = udiv i64 %t1, %nt
  %chunk1 = sub i64 %chunk, 1
  %t2 = add i64 %trip, %chunk1
  %nchunks = udiv i64 %t2, %chunk
  %span = mul i64 %chunk, %step
  %gomp = load atomic ptr, ptr @__dfc_gomp_parallel monotonic, align 8
  %own = icmp eq ptr %gomp, null
  br i1 %own, label %try, label %omp
omp:
  store ptr %body, ptr %job
  %f.ctx = getelementptr i64, ptr %job, i64 1
  store ptr %ctx, ptr %f.ctx
  %f.lb = getelementptr i64, ptr %job, i64 2
  store i64 %lb, ptr %f.lb
  %f.ub = getelementptr i64, ptr %job, i64 3
  store i64 %ub, ptr %f.ub
  %f.span = getelementptr i64, ptr %job, i64 4
  store i64 %span, ptr %f.span
  %f.n = getelementptr i64, ptr %job, i64 5
  store i64 %nchunks, ptr %f.n
  %f.next = getelementptr i64, ptr %job, i64 6
  store i64 0, ptr %f.next
  %f.done = getelementptr i64, ptr %job, i64 7
  store i64 0, ptr %f.done
  %nt32 = trunc i64 %nt to i32
  call void %gomp(ptr @omp_chunks, ptr %job, i32 %nt32, i32 0)
  br label %done
try:
  %busy = call i32 @pthread_mutex_trylock(ptr @__dfc_pool_submit)
  %got = icmp eq i32 %busy, 0
  br i1 %got, label %submit, label %serial
serial:
  call void %body(ptr %ctx, i64 %lb, i64 %ub)
  br label %done
submit:
  call i32 @pthread_mutex_lock(ptr @__dfc_pool_mu)
  %g = load i64, ptr @__dfc_pool_generation
  %g.arg = inttoptr i64 %g to ptr
  br label %grow
grow:
  %n = load i64, ptr @__dfc_pool_workers
  %few = icmp ult i64 %n, %nt1
  br i1 %few, label %spawn, label %post
spawn:
  %rc = call i32 @pthread_create(ptr %tid, ptr null, ptr @worker, ptr %g.arg)
  %ok = icmp eq i32 %rc, 0
  br i1 %ok, label %spawned, label %post
spawned:
  %t = load i64, ptr %tid
  call i32 @pthread_detach(i64 %t)
  %n1 = add i64 %n, 1
  store i64 %n1, ptr @__dfc_pool_workers
  br label %grow
post:
  store ptr %body, ptr @__dfc_job_body
  store ptr %ctx, ptr @__dfc_job_ctx
  store i64 %lb, ptr @__dfc_job_lb
  store i64 %ub, ptr @__dfc_job_ub
  store i64 %span, ptr @__dfc_job_span
  store i64 %nchunks, ptr @__dfc_job_nchunks
  %g1 = add i64 %g, 1
  %tag = and i64 %g1, 4294967295
  %first = shl i64 %tag, 32
  store atomic i64 0, ptr @__dfc_job_done seq_cst, align 8
  store atomic i64 %first, ptr @__dfc_job_next seq_cst, align 8
  store atomic i64 0, ptr @__dfc_pool_parked monotonic, align 8
  %here = call i64 @current_cpu()
  store atomic i64 %here, ptr @__dfc_job_cpu monotonic, align 8
  %asleep = load i64, ptr @__dfc_pool_sleepers
  store atomic i64 %g1, ptr @__dfc_pool_generation seq_cst, align 8
  call i32 @pthread_cond_broadcast(ptr @__dfc_pool_work)
  call i32 @pthread_mutex_unlock(ptr @__dfc_pool_mu)
  ; a worker just woken (the scheduler may put it on this CPU) or last seen
  ; on this CPU runs now, takes a chunk and moves off (`__dfc_leave_shared_cpu`),
  ; rather than after this thread's chunks
  %woke = icmp ne i64 %asleep, 0
  %last = load atomic i64, ptr @__dfc_worker_cpu monotonic, align 8
  %known = icmp sge i64 %here, 0
  %beside = icmp eq i64 %last, %here
  %near = and i1 %known, %beside
  %make.way = or i1 %woke, %near
  br i1 %make.way, label %yield, label %chunks
yield:
  call i32 @sched_yield()
  br label %chunks
chunks:
  call i1 @run_chunks(ptr %body, ptr %ctx, i64 %lb, i64 %ub, i64 %span, i64 %nchunks, ptr @__dfc_job_next,
                      i64 %tag, ptr @__dfc_job_done)
  call void @wait_done(i64 %nchunks)
  call i32 @pthread_mutex_unlock(ptr @__dfc_pool_submit)
  br label %done
done:
  ret void
}

; ---------------------------------------------------------------------------
; Allocator. Buffers of at least 64 KiB are cached: when freed, up to 64 of
; them (at most __dfc_cache_limit bytes) are kept and handed out again for the
; same rounded size (64 KiB steps below 4 MiB, 2 MiB steps above), so repeated
; calls do not pay the kernel's first-touch page zeroing (glibc maps and unmaps
; such buffers, or trims its heap, between calls). Those of at least 4 MiB
; are 2 MiB-aligned and advised to use huge pages (as numpy does). Smaller
; buffers go straight to aligned_alloc / free.

define internal i64 @large_size(i64 %size) nounwind {
  %huge = icmp uge i64 %size, 4194304
  %step = select i1 %huge, i64 2097151, i64 65535
  %s = add i64 %size, %step
  %mask = xor i64 %step, -1
  %r = and i64 %s, %mask
  ret i64 %r
}

; Free the first cached buffer (caller holds the cache mutex).
define internal void @evict_one() nounwind {
entry:
  br label %scan
scan:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %more = icmp ult i64 %i, 64
  br i1 %more, label %probe, label %done
probe:
  %pp = getelementptr inbounds [64 x ptr], ptr @__dfc_cache_ptr, i64 0, i64 %i
  %p = load ptr, ptr %pp
  %empty = icmp eq ptr %p, null
  br i1 %empty, label %next, label %evict
next:
  %i1 = add i64 %i, 1
  br label %scan
evict:
  %sp = getelementptr inbounds [64 x i64], ptr @__dfc_cache_size, i64 0, i64 %i
  %s = load i64, ptr %sp
  store ptr null, ptr %pp
  store i64 0, ptr %sp
  %b = load i64, ptr @__dfc_cache_bytes
  %b1 = sub i64 %b, %s
  store i64 %b1, ptr @__dfc_cache_bytes
  call void @free(ptr %p)
  br label %done
done:
  ret void
}

; A buffer of `size` bytes aligned to `align` (a power of two, at most 2 MiB).
define ptr @__dfc_alloc(i64 %align, i64 %size) nounwind {
entry:
  %big = icmp uge i64 %size, 65536
  br i1 %big, label %large, label %small
small:
  %a1 = sub i64 %align, 1
  %s1 = add i64 %size, %a1
  %mask = sub i64 0, %align
  %r = and i64 %s1, %mask
  %tiny = icmp ult i64 %r, %align
  %n = select i1 %tiny, i64 %align, i64 %r
  %p = call ptr @aligned_alloc(i64 %align, i64 %n)
  ret ptr %p
large:
  %n2 = call i64 @large_size(i64 %size)
  call i32 @pthread_mutex_lock(ptr @__dfc_cache_mu)
  br label %scan
scan:
  %i = phi i64 [ 0, %large ], [ %i1, %next ]
  %more = icmp ult i64 %i, 64
  br i1 %more, label %probe, label %miss
probe:
  %sp = getelementptr inbounds [64 x i64], ptr @__dfc_cache_size, i64 0, i64 %i
  %s = load i64, ptr %sp
  %hit = icmp eq i64 %s, %n2
  br i1 %hit, label %take, label %next
next:
  %i1 = add i64 %i, 1
  br label %scan
take:
  %pp = getelementptr inbounds [64 x ptr], ptr @__dfc_cache_ptr, i64 0, i64 %i
  %p2 = load ptr, ptr %pp
  store ptr null, ptr %pp
  store i64 0, ptr %sp
  %b = load i64, ptr @__dfc_cache_bytes
  %b1 = sub i64 %b, %n2
  store i64 %b1, ptr @__dfc_cache_bytes
  call i32 @pthread_mutex_unlock(ptr @__dfc_cache_mu)
  ret ptr %p2
miss:
  call i32 @pthread_mutex_unlock(ptr @__dfc_cache_mu)
  %huge = icmp uge i64 %size, 4194304
  br i1 %huge, label %huge.alloc, label %medium.alloc
medium.alloc:
  %p4 = call ptr @aligned_alloc(i64 %align, i64 %n2)
  ret ptr %p4
huge.alloc:
  %p3 = call ptr @aligned_alloc(i64 2097152, i64 %n2)
  %null = icmp eq ptr %p3, null
  br i1 %null, label %out, label %advise
advise:
  call i32 @madvise(ptr %p3, i64 %n2, i32 14)  ; MADV_HUGEPAGE
  br label %out
out:
  ret ptr %p3
}

; Release a buffer of `size` bytes from @__dfc_alloc.
define void @__dfc_free(ptr %p, i64 %size) nounwind {
entry:
  %null = icmp eq ptr %p, null
  br i1 %null, label %done, label %some
some:
  %big = icmp uge i64 %size, 65536
  br i1 %big, label %large, label %release
release:
  call void @free(ptr %p)
  br label %done
large:
  %n = call i64 @large_size(i64 %size)
  call i32 @pthread_mutex_lock(ptr @__dfc_cache_mu)
  %limit = load i64, ptr @__dfc_cache_limit
  %fits = icmp ule i64 %n, %limit
  br i1 %fits, label %room, label %unlock.release
unlock.release:
  call i32 @pthread_mutex_unlock(ptr @__dfc_cache_mu)
  br label %release
room:
  %b = load i64, ptr @__dfc_cache_bytes
  %need = add i64 %b, %n
  %over = icmp ugt i64 %need, %limit
  br i1 %over, label %make.room, label %place
make.room:
  call void @evict_one()
  br label %room
place:
  br label %scan
scan:
  %i = phi i64 [ 0, %place ], [ %i1, %next ], [ 0, %full ]
  %more = icmp ult i64 %i, 64
  br i1 %more, label %probe, label %full
full:
  call void @evict_one()
  br label %scan
probe:
  %pp = getelementptr inbounds [64 x ptr], ptr @__dfc_cache_ptr, i64 0, i64 %i
  %q = load ptr, ptr %pp
  %empty = icmp eq ptr %q, null
  br i1 %empty, label %insert, label %next
next:
  %i1 = add i64 %i, 1
  br label %scan
insert:
  store ptr %p, ptr %pp
  %sp = getelementptr inbounds [64 x i64], ptr @__dfc_cache_size, i64 0, i64 %i
  store i64 %n, ptr %sp
  %b2 = load i64, ptr @__dfc_cache_bytes
  %b3 = add i64 %b2, %n
  store i64 %b3, ptr @__dfc_cache_bytes
  call i32 @pthread_mutex_unlock(ptr @__dfc_cache_mu)
  br label %done
done:
  ret void
}

; Keep at most `limit` bytes of freed buffers, freeing cached ones above it.
define void @__dfc_set_cache_limit(i64 %limit) nounwind {
entry:
  call i32 @pthread_mutex_lock(ptr @__dfc_cache_mu)
  store i64 %limit, ptr @__dfc_cache_limit
  br label %check
check:
  %b = load i64, ptr @__dfc_cache_bytes
  %over = icmp ugt i64 %b, %limit
  br i1 %over, label %evict, label %done
evict:
  call void @evict_one()
  br label %check
done:
  call i32 @pthread_mutex_unlock(ptr @__dfc_cache_mu)
  ret void
}

; Soft-float conversions LLVM calls on hosts without native bf16 conversion
; instructions (and, for double to half, on every x86 host), and which libgcc_s
; of GCC 12 and older lacks: float and double to bfloat, double to half,
; rounding to nearest even (NaN stays a quiet NaN of the same sign).

define bfloat @__truncsfbf2(float %x) nounwind {
  %bits = bitcast float %x to i32
  %nan = fcmp uno float %x, 0.0
  %hi = lshr i32 %bits, 16
  %lsb = and i32 %hi, 1
  %bias = add i32 %lsb, 32767
  %sum = add i32 %bits, %bias
  %rounded = lshr i32 %sum, 16
  %quiet = or i32 %hi, 64
  %r32 = select i1 %nan, i32 %quiet, i32 %rounded
  %r16 = trunc i32 %r32 to i16
  %r = bitcast i16 %r16 to bfloat
  ret bfloat %r
}

; Double to float rounding to odd (truncated toward zero, the last bit set when
; inexact) keeps the second rounding, float to bfloat, correct.
define bfloat @__truncdfbf2(double %x) nounwind {
  %g = call float @round_to_odd_float(double %x)
  %r = call bfloat @__truncsfbf2(float %g)
  ret bfloat %r
}

define internal float @round_to_odd_float(double %x) nounwind {
  %f = fptrunc double %x to float
  %back = fpext float %f to double
  %exact = fcmp oeq double %back, %x
  %nan = fcmp uno double %x, 0.0
  %keep = or i1 %exact, %nan
  %bits = bitcast float %f to i32
  %ab = call double @llvm.fabs.f64(double %back)
  %ax = call double @llvm.fabs.f64(double %x)
  %away = fcmp ogt double %ab, %ax
  %down = sub i32 %bits, 1
  %toward_zero = select i1 %away, i32 %down, i32 %bits
  %odd = or i32 %toward_zero, 1
  %r32 = select i1 %keep, i32 %bits, i32 %odd
  %g = bitcast i32 %r32 to float
  ret float %g
}

; Double to half: the same rounding to odd to float, then float to half, which
; every host dfc supports converts natively (F16C comes with AVX2).
define half @__truncdfhf2(double %x) nounwind {
  %g = call float @round_to_odd_float(double %x)
  %r = fptrunc float %g to half
  ret half %r
}

declare double @llvm.fabs.f64(double)
