package main

import (
	"os"
	"strings"
	_ "time/tzdata" // for timeZone support in CronJob, as cmd/kube-apiserver

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // JSON log format, as the upstream mains
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics, as the upstream mains
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric, as the upstream mains
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubeadm "k8s.io/kubernetes/cmd/kubeadm/app"
	kubeadmerrors "k8s.io/kubernetes/cmd/kubeadm/app/util/errors"
)

func runAPIServer() int { return cli.Run(apiserver.NewAPIServerCommand()) }

func runScheduler() int { return cli.Run(scheduler.NewSchedulerCommand()) }

func runControllerManager() int { return cli.Run(controllermanager.NewControllerManagerCommand()) }

// runKubeadm is k8s.io/kubernetes cmd/kubeadm's main (os.Args set by the caller).
func runKubeadm() {
	kubeadmerrors.HandleError(kubeadm.Run())
	os.Exit(0)
}

// runKubectl is k8s.io/kubernetes cmd/kubectl, with k3s's default: without
// --kubeconfig or $KUBECONFIG, use /etc/rancher/k3s/k3s.yaml when it exists.
func runKubectl() {
	kubeenv := os.Getenv("KUBECONFIG")
	for i, a := range os.Args {
		if strings.HasPrefix(a, "--kubeconfig=") {
			kubeenv = strings.SplitN(a, "=", 2)[1]
		} else if a == "--kubeconfig" && i+1 < len(os.Args) {
			kubeenv = os.Args[i+1]
		}
	}
	if kubeenv == "" {
		if _, err := os.Stat("/etc/rancher/k3s/k3s.yaml"); err == nil {
			os.Setenv("KUBECONFIG", "/etc/rancher/k3s/k3s.yaml")
		}
	}
	command := kubectlcmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		kubectlutil.CheckErr(err)
	}
	os.Exit(0)
}
