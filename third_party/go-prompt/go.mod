module github.com/c-bata/go-prompt

go 1.14

require (
	github.com/mattn/go-colorable v0.1.7
	github.com/mattn/go-runewidth v0.0.9
	github.com/mattn/go-tty v0.0.3
	github.com/pkg/term v1.2.0-beta.2
	golang.org/x/sys v0.0.0-20200918174421-af09f7315aff
)
