// Package codeshape holds no code, only tests of the repository's shape:
// TestFunctionLength fails when a function outside third_party/ has a body
// longer than MaxLines, unless an allow-list entry in the test says why.
package codeshape

// MaxLines is the longest function body, in lines, that TestFunctionLength
// accepts without an allow-list entry.
const MaxLines = 120
