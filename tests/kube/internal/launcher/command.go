// The parts every launcher command shares: flavors, the command line as
// k3s parses it, and small readers of flags and environment.

package launcher

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"baremetal.k3s/tests/kube/internal/configfile"
)

const (
	apiPort       = "6443"
	schedulerPort = "10259"
	serviceCIDR   = "10.43.0.0/16"
)

// flavor is the distribution the launcher stands in for.
type flavor struct {
	prog    configfile.Program
	version string // printed and logged: K3sVersion or RKE2Version
	// staticScheduler: the scheduler runs as a static pod (RKE2), not as a
	// child of the launcher (k3s).
	staticScheduler bool
	// psaFile: RKE2's own PodSecurity admission configuration, written and
	// passed to kube-apiserver when --pod-security-admission-config-file is
	// not given (rke2psa.go); empty under k3s, which passes none.
	psaFile string
}

var k3sFlavor = flavor{prog: configfile.K3s, version: K3sVersion}

func rke2Flavor() flavor {
	return flavor{prog: configfile.RKE2(), version: RKE2Version, staticScheduler: true, psaFile: RKE2PSAFile}
}

// parseCommand applies k3s's config-file insertion and flag parsing for the
// subcommand argv[i] ("server" or "agent"). ok=false means exit with code.
func parseCommand(argv []string, fl flavor, defs []configfile.Flag) (v *configfile.Values, parts *configfile.Parts, mode configfile.SliceMode, code int, ok bool) {
	parser := fl.prog.Parser(warnf)
	parts, err := parser.ParseParts(argv)
	if err != nil {
		fatalf("%v", err)
		return nil, nil, "", 1, false
	}
	if parts == nil {
		fatalf("no server or agent subcommand in %q", argv)
		return nil, nil, "", 1, false
	}
	mode, err = configfile.SliceModeFromEnv()
	if err != nil {
		fatalf("%v", err)
		return nil, nil, "", 1, false
	}
	file := configfile.ApplySliceMode(defs, parts.File, parts.CLI, mode)
	v, err = configfile.Parse(defs, append(append([]string{}, file...), parts.CLI...))
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(os.Stdout, "NAME:\n   %s %s - %s test double (baremetal.k3s)\n\nFlags as %s %s; see tests/kube/README.md.\n", fl.prog.Name, parts.Prefix[len(parts.Prefix)-1], fl.prog.Name, fl.prog.Name, fl.version)
		return nil, nil, "", 0, false
	}
	if err != nil {
		// urfave/cli prints the usage error, then k3s's main logs it fatally.
		fmt.Fprintf(os.Stderr, "Incorrect Usage: %v\n\n", err)
		fatalf("Error: %v", err)
		return nil, nil, "", 1, false
	}
	if len(v.Args) > 0 {
		warnf("Ignoring positional arguments %q", v.Args)
	}
	return v, parts, mode, 0, true
}

// envOr is $name, or def when unset or empty.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func durationEnv(name string, def time.Duration) (time.Duration, error) {
	s := os.Getenv(name)
	if s == "" {
		return def, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: want a duration (3s) or seconds", name, s)
	}
	return time.Duration(f * float64(time.Second)), nil
}

func advertiseIP(v *configfile.Values) net.IP {
	if ip := net.ParseIP(v.String("advertise-address")); ip != nil {
		return ip
	}
	for _, s := range v.Slice("node-ip") {
		for _, part := range strings.Split(s, ",") {
			if ip := net.ParseIP(strings.TrimSpace(part)); ip != nil {
				return ip
			}
		}
	}
	ifaces, _ := net.Interfaces()
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
				return n.IP.To4()
			}
		}
	}
	return nil
}

func parseMode(s string) (os.FileMode, error) {
	m, err := strconv.ParseUint(s, 8, 32)
	if err != nil {
		return 0, fmt.Errorf("invalid write-kubeconfig-mode %q: %w", s, err)
	}
	return os.FileMode(m), nil
}

// startState opens the state file of a `server` or `agent` run of flavor fl
// and records its start in the events file.
func startState(command string, fl flavor) *stateFile {
	st := newStateFile(command)
	if fl.prog.Name != "k3s" {
		st.s.Flavor = fl.prog.Name
		st.s.K3sVersion = fl.version
	}
	st.event("start", nil)
	return st
}
