// Package picture draws the shell's two pictures, as text for a terminal
// and as SVG for an HTML notebook:
//
//   - a [Ladder] is a ladder diagram (Wireshark's flow graph): one column
//     per endpoint, one arrow per packet, virtual time down the left side;
//   - a [Diagram] is a state diagram: boxes on a grid, arrows between
//     neighbours, the current state lit and the path taken drawn heavy.
//
// Each picture is data first (columns, arrows and labels; boxes and edges),
// built by the shell from what it recorded, then drawn by two small
// renderers: Text, at a given width in columns, and SVG.
//
// # Text
//
// Text draws with Unicode box-drawing characters and arrows (│ ─ ━ ▶ ◀ ✗ ↻)
// whatever the styles, since vsh's output is Unicode throughout (→ in the
// state ladder). Plain styles (render.New(true): not a terminal, NO_COLOR,
// --plain, every golden file) only mean no ANSI colour: the current state is
// then written [RTS], as the state ladder writes it, and the path stays
// visible through heavy lines. A picture never wraps an arrow: labels lose
// their least important words, then get cut with "…", to fit the width;
// Text returns an error when even that cannot make the picture fit.
//
// # SVG
//
// SVG returns one self-contained <svg> element: no XML declaration, no
// external resources, no <style> or ids that could clash with the page it
// is embedded in (colours are presentation attributes, arrowheads are
// polygons), and the same bytes for the same picture. Text is escaped
// with encoding/xml. ajstarks/svgo, the common Go SVG library, was
// considered: it starts every document with an XML declaration and a
// comment, which do not belong inside HTML, and its last release is from
// 2021; the few elements needed here are written directly.
package picture
