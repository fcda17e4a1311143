package pingpong

import (
	"fmt"

	"github.com/vsh-rdma/vsh/pingpong/exchange"
)

// LocalLine is the line rdma-core prints for a local address (the GID as
// inet_ntop(AF_INET6) prints it). ud_pingpong's has a colon before "GID"
// where the others have a comma; it is kept.
func LocalLine(t Transport, d exchange.Dest) string {
	sep := ","
	if t == UD {
		sep = ":"
	}
	return fmt.Sprintf("  local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x%s GID %s", d.LID, d.QPN, d.PSN, sep, d.GID)
}

// RemoteLine is the line rdma-core prints for a remote address.
func RemoteLine(d exchange.Dest) string {
	return fmt.Sprintf("  remote address: LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s", d.LID, d.QPN, d.PSN, d.GID)
}

// InvalidPageLine is rdma-core's -c line for a bad page.
func InvalidPageLine(page int) string { return fmt.Sprintf("invalid data in page %d", page) }
