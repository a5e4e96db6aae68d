// SPDX-License-Identifier: GPL-2.0-or-later
// IdlePool: a JVM whose many threads are idle and one is busy.  A pool of
// IDLE workers ("worker-N") waits for work that never comes; "cruncher"
// computes until it has run for SECONDS of CPU time (so that it stays the
// busiest thread however loaded the machine is); "contender-1" and
// "contender-2" fight over a lock until each has run a fifth of that.
// Each of those three prints, as it ends, its on-CPU time as the JVM
// reads it from the kernel (thread CPU time):
//   thread <name> oncpu_ns <n>
// usage: java IdlePool [SECONDS [IDLE]]   (defaults 1.5 and 20)
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
        double secs = args.length > 0 ? Double.parseDouble(args[0]) : 1.5;
        int idle = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        long cpu = (long) (secs * 1e9), fifth = cpu / 5;
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
            while (mx.getCurrentThreadCpuTime() < cpu)
                x = crunch(x, 100000);
            report(x);
        }, "cruncher");
        Thread[] contenders = new Thread[2];
        for (int i = 0; i < 2; i++) {
            contenders[i] = new Thread(() -> {
                long x = 1;
                while (mx.getCurrentThreadCpuTime() < fifth) {
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
