// Command k3s is the baremetal.k3s test double of k3s, RKE2 and a kubeadm
// node: one multi-call binary, as k3s is. By subcommand or by the name it
// is called as (argv[0]):
//
//	k3s server|agent           the k3s launcher (flags and config files read as k3s reads them)
//	rke2 server|agent          the same launcher with RKE2's paths and flags; the
//	                           scheduler runs as a static pod (k3s rke2 ... too)
//	kubelet                    the kubelet double: a static-pod runner (k3s kubelet ... too)
//	kubeadm                    the real kubeadm (k3s kubeadm ... too)
//	kube-apiserver, kube-scheduler, kube-controller-manager, kubectl
//	                           the real Kubernetes v1.36.3 commands
//	kine                       the sibling kine binary
//	kubeadm-init-offline       the offline phases of kubeadm init (k3s kubeadm-init-offline)
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"k8s.io/component-base/version"

	"baremetal.k3s/tests/kube/internal/launcher"
	"baremetal.k3s/tests/kube/internal/proctitle"
	"baremetal.k3s/tests/kube/internal/sandbox"
)

func usage() {
	fmt.Fprintf(os.Stderr, `NAME:
   k3s - Kubernetes, but small and simple (baremetal.k3s test double)

USAGE:
   k3s [global options] command [command options] [arguments...]

VERSION:
   %s (%s)

COMMANDS:
   server                Run management server (kine, kube-apiserver, kube-controller-manager, kube-scheduler)
   agent                 Run node agent (joins a server, registers its Node)
   etcd-snapshot         Manage etcd snapshots (save, ls, delete) of a server on embedded etcd
   kubectl               Run kubectl
   kube-apiserver        Run the real kube-apiserver
   kube-scheduler        Run the real kube-scheduler
   kube-controller-manager  Run the real kube-controller-manager
   kine                  Run kine (the sibling kine binary)
   rke2                  Run as rke2 (server, agent, --version)
   kubelet               Run the kubelet double (static pods)
   kubeadm               Run the real kubeadm
   kubeadm-init-offline  Run the offline phases of kubeadm init

GLOBAL OPTIONS:
   --version, -v   print the version
   --help, -h      show help
`, launcher.K3sVersion, launcher.Commit)
}

// setVersion makes the Kubernetes components report gitVersion v (the
// build stamps k3s's "v1.36.3+k3s1"; only the suffix may differ).
func setVersion(v string) {
	if err := version.SetDynamicVersion(v); err != nil {
		fmt.Fprintf(os.Stderr, "version %s: %v\n", v, err)
	}
}

func main() {
	proctitle.Save() // before anything keeps a string of os.Args: the server and agent hide them as k3s does
	launcher.OpenKV = openKV
	launcher.OpenEtcd, launcher.RestoreEtcdSnapshot = openEtcd, restoreEtcd
	// The sandbox helper is this binary re-executed; nothing else may run first.
	if len(os.Args) > 1 && os.Args[1] == sandbox.HelperArg {
		os.Exit(sandbox.Helper(os.Args[2:]))
	}
	args := os.Args
	switch base := filepath.Base(args[0]); base {
	case "kubectl", "kine":
		// Symlinked names act as their subcommand (k3s ships kubectl that way).
		args = append([]string{"k3s", base}, args[1:]...)
	case "kube-apiserver", "kube-scheduler", "kube-controller-manager":
		// Called by their own name only as a static pod's command (the
		// launchers run them as "k3s kube-..."): upstream's version.
		setVersion(launcher.K8sVersion)
		args = append([]string{"k3s", base}, args[1:]...)
	case "rke2":
		os.Exit(rke2Main(args[1:]))
	case "kubelet":
		setVersion(launcher.K8sVersion)
		os.Exit(launcher.RunKubelet(args))
	case "kubeadm":
		setVersion(launcher.K8sVersion)
		os.Args = append([]string{"kubeadm"}, args[1:]...)
		runKubeadm()
	case "kubeadm-init-offline":
		os.Exit(kubeadmInitOffline(args[1:]))
	}
	if len(args) < 2 {
		usage()
		os.Exit(0)
	}
	// Global --debug may precede the subcommand.
	i := 1
	for i < len(args) && (args[i] == "--debug" || args[i] == "-debug") {
		i++
	}
	if i >= len(args) {
		usage()
		os.Exit(0)
	}
	cmd := args[i]
	rest := args[i+1:]
	switch cmd {
	case "--version", "-v", "-version":
		fmt.Printf("k3s version %s (%s)\ngo version %s\n", launcher.K3sVersion, launcher.Commit, runtime.Version())
		os.Exit(0)
	case "--help", "-h", "help":
		usage()
		os.Exit(0)
	case "server":
		os.Exit(launcher.RunServer(args))
	case "agent":
		os.Exit(launcher.RunAgent(args))
	case "etcd-snapshot":
		os.Exit(launcher.RunEtcdSnapshot(append([]string{args[0]}, args[i:]...), os.Stdout))
	case "double-etcd": // embedded etcd, the child of a server (etcd.go)
		os.Exit(runEtcd(rest))
	case "kube-apiserver":
		os.Args = append([]string{"kube-apiserver"}, rest...)
		os.Exit(runAPIServer())
	case "kube-scheduler":
		os.Args = append([]string{"kube-scheduler"}, rest...)
		os.Exit(runScheduler())
	case "kube-controller-manager":
		os.Args = append([]string{"kube-controller-manager"}, rest...)
		os.Exit(runControllerManager())
	case "kubectl":
		os.Args = append([]string{"kubectl"}, rest...)
		runKubectl()
	case "kine":
		execKine(rest)
	case "rke2":
		os.Exit(rke2Main(rest))
	case "kubelet":
		setVersion(launcher.K8sVersion)
		os.Exit(launcher.RunKubelet(append([]string{"kubelet"}, rest...)))
	case "kubeadm":
		setVersion(launcher.K8sVersion)
		os.Args = append([]string{"kubeadm"}, rest...)
		runKubeadm()
	case "kubeadm-init-offline":
		os.Exit(kubeadmInitOffline(rest))
	default:
		if strings.HasPrefix(cmd, "-") {
			fmt.Fprintf(os.Stderr, "Incorrect Usage. flag provided but not defined: %s\n\n", cmd)
			usage()
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "No help topic for '%s'\n", cmd)
		os.Exit(3)
	}
}

func rke2Usage() {
	fmt.Fprintf(os.Stderr, `NAME:
   rke2 - Rancher Kubernetes Engine 2 (baremetal.k3s test double)

USAGE:
   rke2 [global options] command [command options] [arguments...]

VERSION:
   %s (%s)

COMMANDS:
   server   Run management server
   agent    Run node agent

GLOBAL OPTIONS:
   --help, -h     show help
   --version, -v  print the version
`, launcher.RKE2Version, launcher.Commit)
}

// rke2Main is `rke2 ...`: args after the program name.
func rke2Main(args []string) int {
	setVersion(launcher.BuiltRKE2Version) // the components' own version: a told one is only the launcher's label
	launcher.ChildArgv0 = "rke2"
	i := 0
	for i < len(args) && (args[i] == "--debug" || args[i] == "-debug") {
		i++
	}
	if i >= len(args) {
		rke2Usage()
		return 0
	}
	argv := append([]string{"rke2"}, args...)
	switch args[i] {
	case "--version", "-v", "-version":
		fmt.Printf("rke2 version %s (%s)\ngo version %s\n", launcher.RKE2Version, launcher.Commit, runtime.Version())
		return 0
	case "--help", "-h", "help", "h":
		rke2Usage()
		return 0
	case "server":
		return launcher.RunRKE2Server(argv)
	case "agent":
		return launcher.RunRKE2Agent(argv)
	case "kube-apiserver": // the launcher's own children
		os.Args = append([]string{"kube-apiserver"}, args[i+1:]...)
		return runAPIServer()
	case "kube-scheduler":
		os.Args = append([]string{"kube-scheduler"}, args[i+1:]...)
		return runScheduler()
	case "kube-controller-manager":
		os.Args = append([]string{"kube-controller-manager"}, args[i+1:]...)
		return runControllerManager()
	default:
		if strings.HasPrefix(args[i], "-") {
			fmt.Fprintf(os.Stderr, "Incorrect Usage. flag provided but not defined: %s\n\n", args[i])
			rke2Usage()
			return 1
		}
		fmt.Fprintf(os.Stderr, "No help topic for '%s'\n", args[i])
		return 3
	}
}

func kubeadmInitOffline(args []string) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return launcher.RunKubeadmInitOffline(self, args, os.Stdout, os.Stderr)
}

func execKine(rest []string) {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin := os.Getenv("K3S_DOUBLE_KINE")
	if bin == "" {
		bin = filepath.Join(filepath.Dir(self), "kine")
	}
	err = syscall.Exec(bin, append([]string{"kine"}, rest...), os.Environ())
	fmt.Fprintf(os.Stderr, "exec %s: %v\n", bin, err)
	os.Exit(1)
}
