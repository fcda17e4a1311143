package shell

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStoreLayout checks the bytes store writes: fields packed one after
// another from offset=, little-endian for u*, big-endian for be*, and a
// handle's field read from the object itself.
func TestStoreLayout(t *testing.T) {
	sh := newTestShell(t, 1, 1, true, nil)
	defer sh.Close()
	mustExec(t, sh,
		"open_device A",
		"alloc_pd ctx0",
		"reg_mr pd0 length=64 access=local_write",
		"reg_mr pd0 length=4096 access=local_write,remote_read",
		"create_cq ctx0",
		"create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0",
		"store mr0 offset=4 u8=0xaa u16=0x1234 u32=mr1.rkey u64=mr1.addr+16 be16=0x0102 be32=qp0.qp_num be64=mr1.length",
	)
	mr0, mr1, qp0 := sh.h.byName["mr0"].mr, sh.h.byName["mr1"].mr, sh.h.byName["qp0"].qp
	b := mr0.Bytes()
	require.Equal(t, make([]byte, 4), b[:4], "bytes before offset= are untouched")
	require.Equal(t, byte(0xaa), b[4])
	require.Equal(t, uint16(0x1234), binary.LittleEndian.Uint16(b[5:]))
	require.Equal(t, mr1.RKey(), binary.LittleEndian.Uint32(b[7:]))
	require.Equal(t, mr1.Addr()+16, binary.LittleEndian.Uint64(b[11:]))
	require.Equal(t, []byte{1, 2}, b[19:21])
	require.Equal(t, qp0.Num(), binary.BigEndian.Uint32(b[21:]))
	require.Equal(t, uint64(4096), binary.BigEndian.Uint64(b[25:]))
	require.Equal(t, make([]byte, 64-33), b[33:], "bytes after the last field are untouched")

	// A field that does not fit leaves the memory as it was.
	before := append([]byte(nil), b...)
	_, err := sh.Exec("store mr0 u32=7 u32=mr1.addr")
	require.Error(t, err)
	require.Equal(t, before, mr0.Bytes())
}
