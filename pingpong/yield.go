package pingpong

import _ "unsafe" // for go:linkname

// goyield is the runtime's yield to the goroutines of this processor: the
// caller goes to the back of its P's local run queue and the scheduler
// runs, without waking another thread for the P left idle (runtime.Gosched
// puts the caller on the global queue and wakes one). The runtime keeps
// this name for outside packages (go.dev/issue/67401).
//
//go:linkname goyield runtime.goyield
func goyield()
