package launcher

import (
	"net"
	"os"
)

// sdNotify sends state to systemd's NOTIFY_SOCKET (a unixgram socket; a name
// starting with "@" is an abstract socket). It reports whether it was sent.
func sdNotify(state string) (bool, error) {
	name := os.Getenv("NOTIFY_SOCKET")
	if name == "" {
		return false, nil
	}
	addr := &net.UnixAddr{Name: name, Net: "unixgram"}
	if name[0] == '@' {
		// Go maps a leading '@' to the abstract namespace's NUL byte; say so
		// explicitly so this does not rest on that convention.
		addr.Name = "\x00" + name[1:]
	}
	conn, err := net.DialUnix("unixgram", nil, addr)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(state)); err != nil {
		return false, err
	}
	return true, nil
}
