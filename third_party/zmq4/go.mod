module github.com/go-zeromq/zmq4

go 1.21

require (
	golang.org/x/sync v0.7.0
	golang.org/x/text v0.15.0
)
