// SPDX-License-Identifier: GPL-2.0-or-later
// IdlePool: a JVM whose many threads are idle and one is busy.  A pool of
// IDLE workers ("worker-N") waits for work that never comes; "cruncher"
// computes for SECONDS; "contender-1" and "contender-2" fight over a lock
// for the first half of it.  Each of those three prints, as it ends, its
// on-CPU time as the JVM reads it from the kernel (thread CPU time):
//   thread <name> oncpu_ns <n>
// usage: java IdlePool [SECONDS [IDLE]]   (defaults 3 and 20)
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

public class IdlePool {
    static final Object lock = new Object();
    static final ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    static volatile long sink;

    static long crunch(long x, int n) {
        for (int k = 0; k < n; k++)
            x = x * 6364136223846793005L + 1442695040888963407L;
        return x;
    }

    static void report(long x) {
        sink = x;
        long ns = mx.getCurrentThreadCpuTime();
        synchronized (System.out) {
            System.out.println("thread " + Thread.currentThread().getName() + " oncpu_ns " + ns);
        }
    }

    public static void main(String[] args) throws Exception {
        double secs = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        int idle = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        long start = System.nanoTime();
        long until = start + (long) (secs * 1e9), half = start + (long) (secs * 0.5e9);
        AtomicInteger n = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(idle,
                r -> new Thread(r, "worker-" + n.incrementAndGet()));
        CountDownLatch started = new CountDownLatch(idle);
        // A fixed pool makes a thread for each task until it is full.
        for (int i = 0; i < idle; i++)
            pool.submit(started::countDown);
        started.await();
        Thread cruncher = new Thread(() -> {
            long x = 1;
            while (System.nanoTime() < until)
                x = crunch(x, 100000);
            report(x);
        }, "cruncher");
        Thread[] contenders = new Thread[2];
        for (int i = 0; i < 2; i++) {
            contenders[i] = new Thread(() -> {
                long x = 1;
                while (System.nanoTime() < half) {
                    synchronized (lock) {
                        x = crunch(x, 100000);
                    }
                }
                report(x);
            }, "contender-" + (i + 1));
        }
        cruncher.start();
        for (Thread t : contenders)
            t.start();
        cruncher.join();
        for (Thread t : contenders)
            t.join();
        pool.shutdownNow();
    }
}
