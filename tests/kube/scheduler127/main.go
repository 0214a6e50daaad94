// A second, older real kube-scheduler (Kubernetes v1.27.16), for tests only. It still reads the
// v1beta2 and v1beta3 KubeSchedulerConfiguration that v1.36 refuses (and v1), so a file converted
// to v1 can be judged against what the old scheduler made of the original.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() { os.Exit(cli.Run(app.NewSchedulerCommand())) }
