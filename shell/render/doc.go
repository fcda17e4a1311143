// Package render draws what the shell shows: the named styles of its
// output (lipgloss; plain text when the output is not a terminal, NO_COLOR
// or --plain, and in every golden file), tables, key/value lists and the QP
// state ladder. It knows nothing of verbs objects or cells: front ends (the
// terminal, saved notebooks, a notebook kernel) and the shell core use it
// alike.
package render
