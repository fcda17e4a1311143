// Package toolcheck lets tests that need an outside program (tshark, tmux,
// qemu) skip loudly where it is missing, and fail instead of skipping when
// the environment variable VSH_REQUIRE_TOOLS is set, as .ci/run sets it.
//
//	path := toolcheck.Require(t, "tshark", "apt-get install tshark")
package toolcheck
