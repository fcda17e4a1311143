// Package render draws what the shell shows: the named styles of its
// output (lipgloss; plain text when the output is not a terminal, NO_COLOR
// or --plain, and in every golden file), tables, key/value lists and the QP
// state ladder, and how output fits a width: [Wrap] breaks a line where its
// [Kind] allows (a verb call between arguments, prose between words, a line
// meant to be typed back never), and a [TableView] leaves out or wraps
// columns by priority. Width 0 fits nothing: the output is as it was.
//
// It knows nothing of verbs objects or cells: front ends (the terminal,
// saved notebooks, a notebook kernel) and the shell core use it alike.
package render
