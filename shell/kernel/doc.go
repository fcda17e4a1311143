// Package kernel is vsh's Jupyter kernel: a front end of the shell core,
// as the terminal is. It speaks the Jupyter messaging protocol 5.3 over
// ZeroMQ (github.com/go-zeromq/zmq4, pure Go) on the five channels a
// connection file names — shell, iopub, stdin, control and heartbeat —
// with every message signed with HMAC-SHA256.
//
// A code cell is one or more vsh lines, run as the shell runs them: each
// line is a numbered cell of the session, a line that starts with "! "
// must fail, and the first unexpected failure ends the code cell with a
// Jupyter error (ename the errno or kind of failure, evalue why,
// traceback the hint). Each line's output is display data: text/plain
// (what the terminal shows, plain) and text/html (tables as HTML
// tables); a picture it drew (trace ladder, show QP --diagram, bench's
// charts) follows as image/svg+xml.
//
// Line magics: %lesson NAME starts a lesson whose tutor follows the
// notebook's cells, %check [--strict] N judges step N, %seed N and
// %backend NAME start a fresh session so.
package kernel
