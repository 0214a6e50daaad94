// Command kine is k3s's SQLite-backed etcd shim (github.com/k3s-io/kine),
// built unchanged from upstream: the k3s double starts it the way k3s runs
// it in-process, on <data-dir>/server/db/state.db behind a unix socket.
package main

import (
	"context"
	"errors"
	"os"

	"github.com/k3s-io/kine/pkg/app"
	"github.com/sirupsen/logrus"
)

func main() {
	a := app.New()
	if err := a.Run(os.Args); err != nil {
		if !errors.Is(err, context.Canceled) {
			logrus.Fatal(err)
		}
	}
}
