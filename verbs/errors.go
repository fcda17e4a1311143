package verbs

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
)

// Error is a failed verb. It keeps the errno the verb returned, so that
// errors.Is(err, syscall.EINVAL) holds, and says why and how to fix it.
//
// Reference: ibv_modify_qp(3) "returns 0 on success, or the value of errno
// on failure"; most other verbs set errno and return NULL.
type Error struct {
	Op    string        // the libibverbs function: "ibv_modify_qp"
	Errno syscall.Errno // EINVAL
	Why   string        // "RTR on an RC QP needs IBV_QP_AV ...; missing: IBV_QP_AV"
	Hint  string        // how to fix it, for a learner
}

// Error prints "op: ERRNO: why", then "; hint: ..." when there is a hint.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	b.WriteString(": ")
	b.WriteString(ErrnoName(e.Errno))
	if e.Why != "" {
		b.WriteString(": ")
		b.WriteString(e.Why)
	}
	if e.Hint != "" {
		b.WriteString("; hint: ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// Unwrap returns the errno.
func (e *Error) Unwrap() error { return e.Errno }

// Errorf builds an *Error; why is formatted with args.
func Errorf(op string, errno syscall.Errno, hint, why string, args ...any) *Error {
	if len(args) > 0 {
		why = fmt.Sprintf(why, args...)
	}
	return &Error{Op: op, Errno: errno, Why: why, Hint: hint}
}

// AsError returns err as an *Error when it is one.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// ErrnoOf returns the errno inside err, or 0.
func ErrnoOf(err error) syscall.Errno {
	var n syscall.Errno
	if errors.As(err, &n) {
		return n
	}
	return 0
}

// errnoNames are the symbolic names of the errnos verbs return. Numbers are
// Linux's (asm-generic/errno-base.h), which is where verbs run.
var errnoNames = map[syscall.Errno]string{
	1: "EPERM", 2: "ENOENT", 4: "EINTR", 5: "EIO", 9: "EBADF", 11: "EAGAIN", 12: "ENOMEM",
	13: "EACCES", 14: "EFAULT", 16: "EBUSY", 17: "EEXIST", 19: "ENODEV", 20: "ENOTDIR", 21: "EISDIR", 22: "EINVAL",
	24: "EMFILE", 28: "ENOSPC", 30: "EROFS", 34: "ERANGE", 38: "ENOSYS", 61: "ENODATA", 95: "EOPNOTSUPP",
	98: "EADDRINUSE", 99: "EADDRNOTAVAIL", 101: "ENETUNREACH", 105: "ENOBUFS", 110: "ETIMEDOUT",
}

// ErrnoName returns the symbolic name of errno ("EINVAL"), or "errno N".
func ErrnoName(errno syscall.Errno) string {
	if s, ok := errnoNames[errno]; ok {
		return s
	}
	return fmt.Sprintf("errno %d", int(errno))
}

// ParseErrno parses "EINVAL", "einval" or "22".
func ParseErrno(s string) (syscall.Errno, error) {
	if n, isNum, err := parseNumber(s, 31); isNum {
		return syscall.Errno(n), err
	}
	for n, name := range errnoNames {
		if strings.EqualFold(s, name) {
			return n, nil
		}
	}
	return 0, fmt.Errorf("unknown errno %q", s)
}

// Errno values used across the API, as Linux numbers them, so that the
// simulator reports the same numbers on every platform.
const (
	EPERM      = syscall.Errno(1)
	ENOENT     = syscall.Errno(2)
	EIO        = syscall.Errno(5)
	EAGAIN     = syscall.Errno(11)
	ENOMEM     = syscall.Errno(12)
	EFAULT     = syscall.Errno(14)
	EBUSY      = syscall.Errno(16)
	EEXIST     = syscall.Errno(17)
	ENODEV     = syscall.Errno(19)
	EINVAL     = syscall.Errno(22)
	ENOSPC     = syscall.Errno(28)
	ERANGE     = syscall.Errno(34)
	ENOSYS     = syscall.Errno(38)
	EOPNOTSUPP = syscall.Errno(95)
	// EADDRNOTAVAIL is a socket's answer to leaving an IP group it did not
	// join (HostGroups).
	EADDRNOTAVAIL = syscall.Errno(99)
	ETIMEDOUT     = syscall.Errno(110)
)

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
