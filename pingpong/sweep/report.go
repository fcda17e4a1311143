package sweep

import (
	"fmt"
	"math"
	"strings"
)

// Table returns the series as perftest prints its results: the headers
// and one row per size. Bandwidth: #bytes, #iterations, BW average in MiB/s
// (perftest's MB/sec) and in Gb/s, MsgRate in Mpps. Latency: #bytes,
// #iterations, t_min, t_max, t_typical, t_avg and the 99% percentile, in
// microseconds.
func (s Series) Table() (headers []string, rows [][]string) {
	if s.Test == BW {
		headers = []string{"#bytes", "#iterations", "BW average[MiB/sec]", "BW average[Gb/sec]", "MsgRate[Mpps]"}
		for _, p := range s.Points {
			rows = append(rows, []string{fmt.Sprint(p.Size), fmt.Sprint(p.Iters),
				fmt.Sprintf("%.2f", p.MiBps()), fmt.Sprintf("%.2f", p.Gbps()), fmt.Sprintf("%.6f", p.Mpps())})
		}
		return headers, rows
	}
	headers = []string{"#bytes", "#iterations", "t_min[usec]", "t_max[usec]", "t_typical[usec]", "t_avg[usec]", "99% percentile[usec]"}
	for _, p := range s.Points {
		rows = append(rows, []string{fmt.Sprint(p.Size), fmt.Sprint(p.Iters),
			fmt.Sprintf("%.2f", p.TMin), fmt.Sprintf("%.2f", p.TMax), fmt.Sprintf("%.2f", p.TTypical),
			fmt.Sprintf("%.2f", p.TAvg), fmt.Sprintf("%.2f", p.T99)})
	}
	return headers, rows
}

// SizeLabel writes a message size short: 64, 4K, 1M, 1536.
func SizeLabel(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dM", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dK", n>>10)
	}
	return fmt.Sprint(n)
}

// eighths are the block characters of a bar's last cell, 1/8 to 7/8 full.
var eighths = []rune("▏▎▍▌▋▊▉")

// bar draws a bar of length cells (fractional, in eighths), padded to width.
func bar(length float64, width int) string {
	length = math.Max(0, math.Min(length, float64(width)))
	n := int(math.Round(length * 8))
	full, part := n/8, n%8
	var b strings.Builder
	b.WriteString(strings.Repeat("█", full))
	cells := full
	if part > 0 {
		b.WriteRune(eighths[part-1])
		cells++
	}
	b.WriteString(strings.Repeat(" ", width-cells))
	return b.String()
}

// Chart draws the series as a horizontal bar chart, one bar per size.
// Bandwidth is in Gb/s on a linear scale whose full width is full Gb/s (0:
// the largest value measured); latency, t_typical in microseconds, on a
// logarithmic scale from the decade below the smallest value to the decade
// above the largest, with an axis of decades underneath. width is the
// bars' width in cells. The chart is plain text (block characters, no
// escape codes) and the same for the same series.
func (s Series) Chart(width int, full float64) string {
	if len(s.Points) == 0 {
		return ""
	}
	width = max(width, 10)
	labels := make([]string, len(s.Points))
	lw := 0
	for i, p := range s.Points {
		labels[i] = SizeLabel(p.Size)
		lw = max(lw, len(labels[i]))
	}
	var b strings.Builder
	row := func(i int, length float64, value string) {
		fmt.Fprintf(&b, "%*s %s %s\n", lw, labels[i], bar(length, width), value)
	}
	if s.Test == BW {
		top := full
		if top <= 0 {
			for _, p := range s.Points {
				top = math.Max(top, p.Gbps())
			}
		}
		if top <= 0 {
			top = 1
		}
		fmt.Fprintf(&b, "%s, BW average [Gb/sec]\n", s.Program())
		for i, p := range s.Points {
			row(i, p.Gbps()/top*float64(width), fmt.Sprintf("%.2f", p.Gbps()))
		}
		axis := []byte(strings.Repeat(" ", width+1))
		axis[0] = '0'
		end := trimFloat(top)
		copy(axis[max(width+1-len(end), 1):], end)
		fmt.Fprintf(&b, "%*s %s Gb/s\n", lw, "", axis)
		return b.String()
	}
	lo, hi := math.Inf(1), 0.0
	for _, p := range s.Points {
		if p.TTypical > 0 {
			lo, hi = math.Min(lo, p.TTypical), math.Max(hi, p.TTypical)
		}
	}
	if hi == 0 {
		lo, hi = 1, 10
	}
	dlo := math.Floor(math.Log10(lo))
	dhi := math.Ceil(math.Log10(hi))
	if dhi <= dlo {
		dhi = dlo + 1
	}
	scale := func(v float64) float64 {
		if v <= 0 {
			return 0
		}
		return (math.Log10(v) - dlo) / (dhi - dlo) * float64(width)
	}
	fmt.Fprintf(&b, "%s, t_typical [usec], log scale\n", s.Program())
	for i, p := range s.Points {
		row(i, scale(p.TTypical), fmt.Sprintf("%.2f", p.TTypical))
	}
	axis := []byte(strings.Repeat(" ", width+8))
	next := 0
	for d := dlo; d <= dhi; d++ {
		at := int(math.Round((d - dlo) / (dhi - dlo) * float64(width)))
		label := trimFloat(math.Pow(10, d))
		if at < next || at+len(label) > len(axis) {
			continue
		}
		copy(axis[at:], label)
		next = at + len(label) + 1
	}
	fmt.Fprintf(&b, "%*s %s usec\n", lw, "", strings.TrimRight(string(axis), " "))
	return b.String()
}

// trimFloat prints v with at most two decimals and no trailing zeros.
func trimFloat(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
