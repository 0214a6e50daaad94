package nodeconfig

import (
	"fmt"
	"strings"
)

// Taint is a core/v1 Taint.
type Taint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

// String is the taint in --node-taint form.
func (t Taint) String() string {
	if t.Value == "" {
		return t.Key + ":" + t.Effect
	}
	return t.Key + "=" + t.Value + ":" + t.Effect
}

var effects = map[string]bool{"NoSchedule": true, "PreferNoSchedule": true, "NoExecute": true}

// ParseTaint reads "key[=value]:Effect", as the kubelet's --register-with-taints.
func ParseTaint(s string) (Taint, error) {
	kv, effect, ok := strings.Cut(s, ":")
	if !ok || effect == "" {
		return Taint{}, fmt.Errorf("invalid taint spec: %v", s)
	}
	if !effects[effect] {
		return Taint{}, fmt.Errorf("invalid taint effect: %v, unsupported taint effect", effect)
	}
	k, v, _ := strings.Cut(kv, "=")
	if err := validKey(k); err != nil {
		return Taint{}, fmt.Errorf("invalid taint spec: %v, %w", s, err)
	}
	if err := validValue(v); err != nil {
		return Taint{}, fmt.Errorf("invalid taint spec: %v, %w", s, err)
	}
	return Taint{Key: k, Value: v, Effect: effect}, nil
}

// ParseTaints reads --node-taint values; a key and effect given twice is an
// error, as the kubelet's ParseTaints says.
func ParseTaints(values []string) ([]Taint, error) {
	var out []Taint
	seen := map[string]bool{}
	for _, e := range entries(values) {
		t, err := ParseTaint(e)
		if err != nil {
			return nil, err
		}
		id := t.Key + ":" + t.Effect
		if seen[id] {
			return nil, fmt.Errorf("duplicated taints with the same key and effect: %v", t)
		}
		seen[id] = true
		out = append(out, t)
	}
	return out, nil
}
