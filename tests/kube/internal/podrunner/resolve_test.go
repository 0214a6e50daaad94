package podrunner

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The etcd command of kubeadm v1.36's etcd.yaml.
var kubeadmEtcd = []string{
	"--advertise-client-urls=https://172.17.0.2:2379",
	"--cert-file=/etc/kubernetes/pki/etcd/server.crt",
	"--client-cert-auth=true",
	"--data-dir=/var/lib/etcd",
	"--feature-gates=InitialCorruptCheck=true",
	"--initial-advertise-peer-urls=https://172.17.0.2:2380",
	"--initial-cluster=node=https://172.17.0.2:2380",
	"--key-file=/etc/kubernetes/pki/etcd/server.key",
	"--listen-client-urls=https://127.0.0.1:2379,https://172.17.0.2:2379",
	"--listen-metrics-urls=http://127.0.0.1:2381",
	"--listen-peer-urls=https://172.17.0.2:2380",
	"--name=node",
	"--peer-cert-file=/etc/kubernetes/pki/etcd/peer.crt",
	"--peer-client-cert-auth=true",
	"--peer-key-file=/etc/kubernetes/pki/etcd/peer.key",
	"--peer-trusted-ca-file=/etc/kubernetes/pki/etcd/ca.crt",
	"--snapshot-count=10000",
	"--trusted-ca-file=/etc/kubernetes/pki/etcd/ca.crt",
	"--watch-progress-notify-interval=5s",
}

func TestEtcdToKineKubeadm(t *testing.T) {
	got, notes := EtcdToKine(kubeadmEtcd)
	want := []string{
		"--listen-address=https://127.0.0.1:2379",
		"--endpoint=sqlite:///var/lib/etcd/kine.db" + KineSQLiteParams,
		"--server-cert-file=/etc/kubernetes/pki/etcd/server.crt",
		"--server-key-file=/etc/kubernetes/pki/etcd/server.key",
		"--trusted-ca-file=/etc/kubernetes/pki/etcd/ca.crt",
		"--metrics-ignore-tls-config",
		"--metrics-bind-address=127.0.0.1:2381",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "--peer-cert-file") || strings.Contains(notes[0], "--data-dir") {
		t.Fatalf("notes %q", notes)
	}
}

func TestEtcdToKineForms(t *testing.T) {
	// "--flag value" forms, no client cert auth, a non-loopback-first list, defaults.
	got, _ := EtcdToKine([]string{"--listen-client-urls", "http://10.0.0.1:2379,http://localhost:12379", "--cert-file", "/c", "--key-file", "/k",
		"--trusted-ca-file", "/ca", "--name", "n1"})
	want := []string{"--listen-address=http://localhost:12379", "--endpoint=sqlite://n1.etcd/kine.db" + KineSQLiteParams,
		"--server-cert-file=/c", "--server-key-file=/k", "--metrics-bind-address=0"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q", got)
	}
	got, _ = EtcdToKine(nil)
	if got[0] != "--listen-address=http://127.0.0.1:2379" || got[1] != "--endpoint=sqlite://default.etcd/kine.db"+KineSQLiteParams {
		t.Fatalf("defaults %q", got)
	}
}

func TestDefaultResolver(t *testing.T) {
	r := DefaultResolver("/usr/bin/kubelet", "/usr/local/bin/kine")
	ex, err := r([]string{"kube-scheduler", "--config=/x"})
	if err != nil || ex.Binary != "/usr/bin/kubelet" || ex.Path != "/usr/local/bin/kube-scheduler" || !reflect.DeepEqual(ex.Argv, []string{"kube-scheduler", "--config=/x"}) {
		t.Fatalf("%+v %v", ex, err)
	}
	ex, err = r([]string{"/usr/local/bin/kube-apiserver", "--a"})
	if err != nil || ex.Path != "/usr/local/bin/kube-apiserver" || ex.Argv[0] != "/usr/local/bin/kube-apiserver" {
		t.Fatalf("%+v %v", ex, err)
	}
	ex, err = r([]string{"etcd", "--data-dir=/d"})
	if err != nil || ex.Binary != "/usr/local/bin/kine" || ex.Path != "/usr/local/bin/etcd" || ex.Argv[0] != "etcd" || ex.Argv[2] != "--endpoint=sqlite:///d/kine.db"+KineSQLiteParams {
		t.Fatalf("%+v %v", ex, err)
	}
	var un *ErrUnavailable
	if _, err := r([]string{"kube-controller-manager"}); !errors.As(err, &un) || un.Command != "kube-controller-manager" {
		t.Fatalf("controller-manager: %v", err)
	}
	if _, err := r(nil); err == nil {
		t.Fatal("no command accepted")
	}
}

func TestCrashBackoffSchedule(t *testing.T) {
	b := newCrashBackoff(10*time.Second, 300*time.Second)
	t0 := time.Unix(1000, 0)
	var got []time.Duration
	at := t0
	for i := 0; i < 9; i++ {
		d := b.delay(at)
		got = append(got, d)
		at = at.Add(d + time.Second) // ran one second after each restart
	}
	want := []time.Duration{0, 10, 20, 40, 80, 160, 300, 300, 300}
	for i := range want {
		want[i] *= time.Second
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
	// An exit more than 2*max (10 minutes) after the previous one starts over.
	at = at.Add(10*time.Minute + time.Second)
	if d := b.delay(at); d != 0 {
		t.Fatalf("after a long run: %v", d)
	}
	if d := b.delay(at.Add(time.Second)); d != 10*time.Second {
		t.Fatalf("then: %v", d)
	}
	var r retryBackoff
	var rs []time.Duration
	for i := 0; i < 10; i++ {
		rs = append(rs, r.next())
	}
	if rs[0] != 500*time.Millisecond || rs[1] != time.Second || rs[9] != retryMax {
		t.Fatalf("retry %v", rs)
	}
}

func TestExpand(t *testing.T) {
	vals := map[string]string{"A": "1", "B": "x y"}
	for in, want := range map[string]string{"$(A)": "1", "--b=$(B)": "--b=x y", "$$(A)": "$(A)", "$(C)": "$(C)", "$A": "$A", "a$": "a$", "$(A": "$(A"} {
		if got := expand(in, vals); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}
