package sweep_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/vsh-rdma/vsh/pingpong/sweep"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

// Latency of RDMA WRITE and READ from 64 B to 4 KiB between two simulated
// devices, in virtual time: the same figures at every run.
func ExampleRun() {
	f := sim.New(sim.Config{Devices: 2, Seed: 1})
	defer f.Close()
	devs, _ := f.Devices()
	a, _ := devs[0].Open()
	defer a.Close()
	b, _ := devs[1].Open()
	defer b.Close()
	res, err := sweep.Run(context.Background(), a, b, sweep.Config{
		Ops:     []sweep.Op{sweep.Write, sweep.Read},
		Tests:   []sweep.Test{sweep.Lat},
		MinSize: 64, MaxSize: 4096, LatIters: 20,
		Fabric: f, // Clock Virtual, the default
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("path MTU %d\n", res.PathMTU.Bytes())
	for _, s := range res.Series {
		for _, p := range s.Points {
			fmt.Printf("%s %4d B: %.2f usec\n", s.Program(), p.Size, p.TTypical)
		}
	}
	// Output:
	// path MTU 1024
	// ib_write_lat   64 B: 2.13 usec
	// ib_write_lat  128 B: 2.17 usec
	// ib_write_lat  256 B: 2.25 usec
	// ib_write_lat  512 B: 2.42 usec
	// ib_write_lat 1024 B: 2.75 usec
	// ib_write_lat 2048 B: 3.10 usec
	// ib_write_lat 4096 B: 3.80 usec
	// ib_read_lat   64 B: 4.16 usec
	// ib_read_lat  128 B: 4.20 usec
	// ib_read_lat  256 B: 4.28 usec
	// ib_read_lat  512 B: 4.44 usec
	// ib_read_lat 1024 B: 4.77 usec
	// ib_read_lat 2048 B: 5.13 usec
	// ib_read_lat 4096 B: 5.83 usec
}

// The sizes of a sweep double from the smallest; the largest is always
// measured.
func ExampleSizes() {
	fmt.Println(sweep.Sizes(64, 1024))
	fmt.Println(sweep.Sizes(1000, 5000))
	// Output:
	// [64 128 256 512 1024]
	// [1000 2000 4000 5000]
}

// A series prints as perftest's result table.
func ExampleSeries_Table() {
	s := sweep.Series{Op: sweep.Send, Test: sweep.BW, Points: []sweep.Point{
		{Size: 4096, Iters: 1000, Elapsed: 1_000_000}, // 1000 messages in 1 ms
	}}
	headers, rows := s.Table()
	fmt.Println(strings.Join(headers, " | "))
	fmt.Println(strings.Join(rows[0], " | "))
	// Output:
	// #bytes | #iterations | BW average[MiB/sec] | BW average[Gb/sec] | MsgRate[Mpps]
	// 4096 | 1000 | 3906.25 | 32.77 | 1.000000
}

// A bandwidth chart scales the bars to the link rate.
func ExampleSeries_Chart() {
	s := sweep.Series{Op: sweep.Write, Test: sweep.BW, Points: []sweep.Point{
		{Size: 64, Iters: 1000, Elapsed: 100_000},     // 5.12 Gb/s
		{Size: 4096, Iters: 1000, Elapsed: 1_600_000}, // 20.48 Gb/s
	}}
	fmt.Print(s.Chart(20, 25))
	// Output:
	// ib_write_bw, BW average [Gb/sec]
	// 64 ████▏                5.12
	// 4K ████████████████▍    20.48
	//    0                  25 Gb/s
}
