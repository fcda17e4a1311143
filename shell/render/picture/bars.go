package picture

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// A BarChart is bench's chart of one series: one horizontal bar per
// message size, on a linear scale (bandwidth) or a logarithmic one
// (latency, whose values span decades).
type BarChart struct {
	Title string // the series: "ib_write_bw, BW average [Gb/sec]"
	Unit  string // of the axis: "Gb/s", "usec"
	Bars  []Bar
	// Full is the linear scale's end (the link's rate); 0 takes the
	// largest value.
	Full float64
	// Log draws a logarithmic scale from the decade below the smallest
	// value to the decade above the largest.
	Log bool
}

// A Bar is one message size's value.
type Bar struct {
	Label string  // the size: 64, 4K, 1M
	Value float64 // in the chart's unit
	Text  string  // the value as the table prints it
}

// maxBars bounds a chart: a sweep has at most a few dozen sizes.
const maxBars = 256

// SVG draws the chart as a self-contained <svg> element.
func (c BarChart) SVG() (string, error) {
	if len(c.Bars) == 0 {
		return "", errors.New("a bar chart needs at least one bar")
	}
	if len(c.Bars) > maxBars {
		return "", fmt.Errorf("a bar chart of %d bars; at most %d", len(c.Bars), maxBars)
	}
	lw, tw := 0, 0
	for _, b := range c.Bars {
		if math.IsNaN(b.Value) || math.IsInf(b.Value, 0) || b.Value < 0 {
			return "", fmt.Errorf("bar %s: value %v is not a measure", b.Label, b.Value)
		}
		lw, tw = max(lw, len([]rune(b.Label))), max(tw, len([]rune(b.Text)))
	}
	const barW, rowH, top, pad = 400.0, 20.0, 28.0, 10.0
	left := pad + float64(lw)*svgCharW + 8
	w := int(left + barW + 8 + float64(tw)*svgCharW + pad)
	h := int(top + float64(len(c.Bars))*rowH + 36)
	scale, ticks := c.scale(barW)
	var s svgWriter
	s.open(w, h, c.Title)
	s.text(pad, 18, "start", svgInk, c.Title, "font-weight", "bold")
	axisY := top + float64(len(c.Bars))*rowH + 4
	for _, t := range ticks {
		x := left + t.x
		s.line(x, top-4, x, axisY, svgDim, 0.5, "stroke-dasharray", "2 3")
		s.text(x, axisY+14, "middle", svgDim, t.label)
	}
	s.line(left, axisY, left+barW, axisY, svgDim, 1)
	s.text(left+barW, axisY+28, "end", svgDim, c.Unit)
	for i, b := range c.Bars {
		y := top + float64(i)*rowH
		s.text(left-8, y+13, "end", svgInk, b.Label)
		s.elem("rect", "x", num(left), "y", num(y+3), "width", num(scale(b.Value)), "height", num(rowH-6), "fill", svgWire)
		s.text(left+barW+8, y+13, "start", svgInk, b.Text)
	}
	return s.close(), nil
}

// tick is a labelled mark of the axis, x pixels from its start.
type tick struct {
	x     float64
	label string
}

// scale returns the value-to-pixels function of the chart and its ticks.
func (c BarChart) scale(width float64) (func(float64) float64, []tick) {
	if !c.Log {
		full := c.Full
		for _, b := range c.Bars {
			if c.Full <= 0 {
				full = math.Max(full, b.Value)
			}
		}
		if full <= 0 {
			full = 1
		}
		f := func(v float64) float64 { return math.Min(v, full) / full * width }
		return f, []tick{{0, "0"}, {width / 2, trim(full / 2)}, {width, trim(full)}}
	}
	lo, hi := math.Inf(1), 0.0
	for _, b := range c.Bars {
		if b.Value > 0 {
			lo, hi = math.Min(lo, b.Value), math.Max(hi, b.Value)
		}
	}
	if hi == 0 {
		lo, hi = 1, 10
	}
	dlo, dhi := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if dhi <= dlo {
		dhi = dlo + 1
	}
	f := func(v float64) float64 {
		if v <= 0 {
			return 0
		}
		return math.Max(0, math.Min(1, (math.Log10(v)-dlo)/(dhi-dlo))) * width
	}
	var ts []tick
	for d := dlo; d <= dhi; d++ {
		ts = append(ts, tick{(d - dlo) / (dhi - dlo) * width, trim(math.Pow(10, d))})
	}
	return f, ts
}

// trim prints a number with at most two decimals, none that are zero.
func trim(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}
