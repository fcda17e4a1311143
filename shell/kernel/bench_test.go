package kernel

import (
	"context"
	"slices"
	"testing"
	"time"
)

// median returns the median of ds.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkKernelStart times, on the kernel's side, from New (the
// session opened, the sockets bound) to the first kernel_info reply
// received by a client that dialled at once: start-ms is the median of
// the runs (-benchtime=10x takes 10), against the target of 100 ms.
func BenchmarkKernelStart(b *testing.B) {
	var ds []time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		c := startKernel(b) // New, Run, dial, kernel_info until iopub answers
		ds = append(ds, time.Since(start))
		c.close()
	}
	m := median(ds)
	b.ReportMetric(float64(m.Microseconds())/1000, "start-ms")
	b.ReportMetric(float64(m)/float64(100*time.Millisecond), "of-target")
}

// BenchmarkKernelCellOverhead times a cell through the kernel — the
// execute_request sent, its output and reply and the status idle
// received — and the same line run straight on a shell, side by side;
// overhead-ms is the difference of the medians (-benchtime=200x takes
// 200 of each), against the target of 10 ms.
func BenchmarkKernelCellOverhead(b *testing.B) {
	c := startKernel(b)
	defer c.close()
	sh, err := openSim(Session{})
	if err != nil {
		b.Fatal(err)
	}
	defer sh.Close()
	const line = "devices"
	var viaKernel, direct []time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := sh.ExecDisplay(context.Background(), line); err != nil {
			b.Fatal(err)
		}
		direct = append(direct, time.Since(t0))
		t0 = time.Now()
		if r, _ := c.execute(line); r["status"] != "ok" {
			b.Fatal(r)
		}
		viaKernel = append(viaKernel, time.Since(t0))
	}
	k, d := median(viaKernel), median(direct)
	b.ReportMetric(float64(k.Microseconds())/1000, "kernel-ms")
	b.ReportMetric(float64(d.Microseconds())/1000, "direct-ms")
	b.ReportMetric(float64((k-d).Microseconds())/1000, "overhead-ms")
	b.ReportMetric(float64(k-d)/float64(10*time.Millisecond), "of-target")
}
