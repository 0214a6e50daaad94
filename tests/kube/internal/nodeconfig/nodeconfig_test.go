package nodeconfig

import (
	"reflect"
	"runtime"
	"strings"
	"testing"
)

func TestParseLabels(t *testing.T) {
	got, err := ParseLabels([]string{"gpu=nvidia", "a=1,b=2", "flag", "empty=", "a=3", "example.com/zone=eu-1"})
	want := map[string]string{"gpu": "nvidia", "a": "3", "b": "2", "flag": "", "empty": "", "example.com/zone": "eu-1"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseLabels = %v, %v", got, err)
	}
	for _, bad := range []string{"bad key=1", "k=bad value", "/x=1", "UPPER.example/x=1", strings.Repeat("k", 64) + "=1"} {
		if _, err := ParseLabels([]string{bad}); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestParseTaints(t *testing.T) {
	got, err := ParseTaints([]string{"gpu=true:NoSchedule", "dedicated:PreferNoSchedule,k=v:NoExecute"})
	want := []Taint{{"gpu", "true", "NoSchedule"}, {"dedicated", "", "PreferNoSchedule"}, {"k", "v", "NoExecute"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseTaints = %v, %v", got, err)
	}
	if s := got[0].String() + " " + got[1].String(); s != "gpu=true:NoSchedule dedicated:PreferNoSchedule" {
		t.Fatalf("String: %s", s)
	}
	for bad, msg := range map[string]string{
		"gpu=true":           "invalid taint spec",
		"gpu=true:Sometimes": "invalid taint effect",
		"bad key:NoSchedule": "invalid taint spec",
	} {
		if _, err := ParseTaints([]string{bad}); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := ParseTaints([]string{"a=1:NoSchedule", "a=2:NoSchedule"}); err == nil {
		t.Error("duplicate key and effect accepted")
	}
	if ts, err := ParseTaints(nil); ts != nil || err != nil {
		t.Errorf("none: %v %v", ts, err)
	}
}

func TestDefaultLabels(t *testing.T) {
	l := DefaultLabels("node-1", "k3s")
	if l["kubernetes.io/hostname"] != "node-1" || l["kubernetes.io/os"] != runtime.GOOS ||
		l["kubernetes.io/arch"] != runtime.GOARCH || l["node.kubernetes.io/instance-type"] != "k3s" {
		t.Fatalf("DefaultLabels = %v", l)
	}
}
