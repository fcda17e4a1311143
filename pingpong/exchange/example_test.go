package exchange_test

import (
	"fmt"

	"github.com/vsh-rdma/vsh/pingpong/exchange"
	"github.com/vsh-rdma/vsh/verbs"
)

func ExampleDest_Marshal() {
	g, _ := verbs.ParseGID("192.168.1.10")
	d := exchange.Dest{LID: 0, QPN: 0x0000c4, PSN: 0x5a1b2c, GID: g}
	m := d.Marshal()
	fmt.Printf("%q\n", m[:])
	fmt.Println(d)
	// Output:
	// "0000:0000c4:5a1b2c:00000000000000000000ffffc0a8010a\x00"
	// LID 0x0000, QPN 0x0000c4, PSN 0x5a1b2c, GID ::ffff:192.168.1.10
}
