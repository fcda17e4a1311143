// Package sweep measures the throughput and the ping-pong latency of RC
// SEND, RDMA WRITE and RDMA READ over a range of message sizes, the classic
// experiment of perftest (ib_send_bw, ib_write_lat, ib_read_bw, ... with -a)
// and of every FPGA-NIC paper: message sizes doubling from a minimum to a
// maximum, a number of iterations per size for bandwidth and another for
// latency, tx_depth work requests kept outstanding for bandwidth.
//
// It uses the verbs API only, so it runs on every backend. Both endpoints
// live in one process: A and B are two device contexts (two devices, or one
// device twice, in loopback as on a single rxe0), and one loop plays both
// programs, each side doing exactly what perftest's side does — post, poll,
// spin on the last byte of the buffer — with no time of its own.
//
// Two clocks. On a fabric that implements verbs.Stepper (the simulator's
// in-process fabric), Clock Virtual measures the fabric's virtual time: the
// loop switches the fabric to step delivery and moves it one packet at a
// time, so every figure follows the link model (latency, bandwidth, MTU) and
// is the same at every run, byte for byte. Clock Wall measures elapsed real
// time, as perftest does with its cycle counter; on real hardware it is the
// only clock.
//
// The figures are computed as perftest computes them (perftest_parameters.c
// print_report_bw and print_report_lat): bandwidth is bytes over the time
// from the first post to the last completion, in MiB/s (perftest's MB/sec is
// 2^20 bytes), with the message rate in millions per second; latency is the
// time between consecutive posts of the initiator, sorted, the two largest
// dropped, halved for SEND and WRITE (a ping-pong is two messages) and not
// for READ (one READ is a whole round trip).
//
//	res, err := sweep.Run(ctx, a, b, sweep.Config{ // a, b: the verbs.Context of A and B
//		Ops: []sweep.Op{sweep.Write}, Tests: []sweep.Test{sweep.BW, sweep.Lat},
//		MinSize: 64, MaxSize: 1 << 20,
//		Fabric: stepper, // Clock Virtual; on real verbs: Clock: sweep.Wall
//	})
//	for _, s := range res.Series {
//		headers, rows := s.Table()  // perftest's columns
//		fmt.Print(s.Chart(50, 25)) // bars: Gb/s against a 25 Gb/s link, or usec on a log scale
//	}
package sweep
