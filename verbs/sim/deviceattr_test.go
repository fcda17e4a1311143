package sim

import "testing"

// TestDeviceXRCFlag checks that device_cap_flags says IB_DEVICE_XRC exactly
// when the simulator has XRC (rxe never does; a C program may look).
func TestDeviceXRCFlag(t *testing.T) {
	for _, xrc := range []bool{false, true} {
		f := New(Config{XRC: xrc})
		d, err := f.Device(0)
		if err != nil {
			t.Fatal(err)
		}
		c, err := d.Open()
		if err != nil {
			t.Fatal(err)
		}
		a, err := c.QueryDevice()
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := a.DeviceCapFlags&deviceXRC != 0; got != xrc {
			t.Errorf("XRC %v: device_cap_flags %#x has IB_DEVICE_XRC %v", xrc, a.DeviceCapFlags, got)
		}
		if a.DeviceCapFlags&^deviceXRC != rxeDeviceCapFlags {
			t.Errorf("XRC %v: device_cap_flags %#x; want rxe's %#x and nothing else", xrc, a.DeviceCapFlags, rxeDeviceCapFlags)
		}
	}
}
