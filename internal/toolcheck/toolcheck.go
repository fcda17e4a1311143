package toolcheck

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// EnvRequire is the environment variable that turns a missing tool from a
// skip into a failure. .ci/run sets it to 1.
const EnvRequire = "VSH_REQUIRE_TOOLS"

// Required reports whether missing tools must fail tests rather than skip them.
func Required() bool { return os.Getenv(EnvRequire) != "" }

// Require returns the path of the named program. Where it is missing, the test
// is skipped with a loud message naming how to install it, or fails when
// VSH_REQUIRE_TOOLS is set.
func Require(t testing.TB, name, install string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	Missing(t, fmt.Sprintf("%s not found in PATH (install: %s)", name, install))
	return ""
}

// Missing skips (or, under VSH_REQUIRE_TOOLS, fails) the test with reason.
func Missing(t testing.TB, reason string) {
	t.Helper()
	msg := "SKIPPED LOUDLY: " + reason
	if Required() {
		t.Fatalf("%s; %s is set, so a missing tool is a failure", msg, EnvRequire)
	}
	fmt.Fprintln(os.Stderr, "*** "+msg)
	t.Skip(msg)
}
