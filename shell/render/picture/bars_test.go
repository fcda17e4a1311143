package picture

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// barWidths reads the widths of the bars an SVG chart drew (the rects
// after the background).
func barWidths(svg string) []float64 {
	var out []float64
	for _, m := range regexp.MustCompile(`<rect [^>]*width="([0-9.]+)" height="14"`).FindAllStringSubmatch(svg, -1) {
		v, _ := strconv.ParseFloat(m[1], 64)
		out = append(out, v)
	}
	return out
}

func TestBarChart(t *testing.T) {
	tests := []struct {
		name   string
		c      BarChart
		widths []float64 // of the bars, in pixels (400 is full)
		ticks  []string
	}{
		{"linear to the link's rate", BarChart{Title: "ib_write_bw", Unit: "Gb/s", Full: 25,
			Bars: []Bar{{"64", 2.5, "2.50"}, {"4K", 12.5, "12.50"}, {"1M", 25, "25.00"}}},
			[]float64{40, 200, 400}, []string{">0<", ">12.5<", ">25<"}},
		{"linear to the largest", BarChart{Unit: "Gb/s", Bars: []Bar{{"64", 1, "1"}, {"128", 4, "4"}}},
			[]float64{100, 400}, []string{">2<", ">4<"}},
		{"logarithmic over decades", BarChart{Unit: "usec", Log: true, Bars: []Bar{{"2", 1, "1"}, {"4K", 10, "10"}, {"1M", 100, "100"}}},
			[]float64{0, 200, 400}, []string{">1<", ">10<", ">100<"}},
		{"a value past full is cut at the end", BarChart{Full: 10, Bars: []Bar{{"64", 30, "30"}}}, []float64{400}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svg, err := tt.c.SVG()
			if err != nil {
				t.Fatal(err)
			}
			got := barWidths(svg)
			if len(got) != len(tt.widths) {
				t.Fatalf("%d bars, want %d:\n%s", len(got), len(tt.widths), svg)
			}
			for i := range got {
				if math.Abs(got[i]-tt.widths[i]) > 0.1 {
					t.Errorf("bar %d is %v px, want %v", i, got[i], tt.widths[i])
				}
			}
			for _, tk := range tt.ticks {
				if !strings.Contains(svg, tk) {
					t.Errorf("no tick %s in\n%s", tk, svg)
				}
			}
			if !strings.HasPrefix(svg, "<svg ") || strings.Contains(svg, "\n\n") {
				t.Errorf("not one SVG element without blank lines:\n%s", svg)
			}
		})
	}
	for _, bad := range []BarChart{
		{},
		{Bars: []Bar{{"64", math.NaN(), "NaN"}}},
		{Bars: []Bar{{"64", -1, "-1"}}},
		{Bars: make([]Bar, maxBars+1)},
	} {
		if _, err := bad.SVG(); err == nil {
			t.Errorf("SVG of %d bars (first %v) drew a chart", len(bad.Bars), bad.Bars)
		}
	}
}
