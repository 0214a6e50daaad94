// Copyright (c) 2026, baremetal.k3s contributors
// GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
// SPDX-License-Identifier: GPL-3.0-or-later

// goyaml-oracle: how the Go readers of k3s and kube-scheduler read YAML documents (tests only).
//
// stdin: JSON lines {"id": "...", "text": "..."}; stdout: one JSON line per document:
//
//	k3s     yaml.v2 Unmarshal into yaml.MapSlice (k3s pkg/configfilearg), each pair's key
//	        and value as a typed dump, fmt.Sprint of both, wrangler's convert.ToString of
//	        both and of each item of a []interface{} value (what becomes --key=item)
//	any     yaml.v2 Unmarshal into interface{} (maps as map[interface{}]interface{})
//	strict  sigs.k8s.io/yaml YAMLToJSONStrict (duplicate keys refused), the JSON or the error
//	json    sigs.k8s.io/yaml YAMLToJSON
//
// A typed dump is {"t": type, "v": fmt.Sprint(value)} for a scalar ("bits": the float64's
// bits in hex), {"t": "MapSlice"|"map"|"slice", "items": [...]} for a collection; a map's
// items are sorted by their key's dump, as JSON text.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"

	"github.com/rancher/wrangler/v3/pkg/data/convert"
	"gopkg.in/yaml.v2"
	syaml "sigs.k8s.io/yaml"
)

type input struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

type pair struct {
	K     interface{} `json:"k"`
	V     interface{} `json:"v"`
	KS    string      `json:"ks"`
	VS    string      `json:"vs"`
	KSp   string      `json:"ksprint"`
	VSp   string      `json:"vsprint"`
	Items []string    `json:"items,omitempty"`
}

type result struct {
	OK     bool        `json:"ok"`
	Error  string      `json:"error,omitempty"`
	Pairs  []pair      `json:"pairs,omitempty"`
	Sprint string      `json:"sprint,omitempty"`
	Value  interface{} `json:"value,omitempty"`
	JSON   string      `json:"json,omitempty"`
}

type output struct {
	ID     string `json:"id"`
	K3s    result `json:"k3s"`
	Any    result `json:"any"`
	Strict result `json:"strict"`
	JSON   result `json:"json"`
}

func marshal(v interface{}) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%q", err.Error())
	}
	return string(bytes.TrimRight(buf.Bytes(), "\n"))
}

func dump(v interface{}) interface{} {
	switch x := v.(type) {
	case nil:
		return map[string]interface{}{"t": "nil"}
	case string:
		return map[string]interface{}{"t": "string", "v": x}
	case bool, int, int64, uint64:
		return map[string]interface{}{"t": fmt.Sprintf("%T", x), "v": fmt.Sprint(x)}
	case float64:
		return map[string]interface{}{"t": "float64", "v": fmt.Sprint(x), "bits": fmt.Sprintf("%016x", math.Float64bits(x))}
	case yaml.MapSlice:
		items := [][2]interface{}{}
		for _, it := range x {
			items = append(items, [2]interface{}{dump(it.Key), dump(it.Value)})
		}
		return map[string]interface{}{"t": "MapSlice", "items": items}
	case []interface{}:
		items := []interface{}{}
		for _, it := range x {
			items = append(items, dump(it))
		}
		return map[string]interface{}{"t": "slice", "items": items}
	case map[interface{}]interface{}:
		type kv struct {
			key string
			k   interface{}
			v   interface{}
		}
		var kvs []kv
		for k, val := range x {
			dk := dump(k)
			kvs = append(kvs, kv{marshal(dk), dk, dump(val)})
		}
		sort.Slice(kvs, func(i, j int) bool { return kvs[i].key < kvs[j].key })
		items := [][2]interface{}{}
		for _, it := range kvs {
			items = append(items, [2]interface{}{it.k, it.v})
		}
		return map[string]interface{}{"t": "map", "items": items}
	default:
		return map[string]interface{}{"t": fmt.Sprintf("%T", x), "v": fmt.Sprint(x)}
	}
}

func protect(f func() result) (r result) {
	defer func() {
		if e := recover(); e != nil {
			r = result{OK: false, Error: fmt.Sprintf("panic: %v", e)}
		}
	}()
	return f()
}

func k3s(text []byte) result {
	data := yaml.MapSlice{}
	if err := yaml.Unmarshal(text, &data); err != nil {
		return result{Error: err.Error()}
	}
	r := result{OK: true, Pairs: []pair{}, Sprint: fmt.Sprint(data)}
	for _, it := range data {
		p := pair{K: dump(it.Key), V: dump(it.Value), KS: convert.ToString(it.Key), VS: convert.ToString(it.Value),
			KSp: fmt.Sprint(it.Key), VSp: fmt.Sprint(it.Value)}
		if s, ok := it.Value.([]interface{}); ok {
			p.Items = []string{}
			for _, x := range s {
				p.Items = append(p.Items, convert.ToString(x))
			}
		}
		r.Pairs = append(r.Pairs, p)
	}
	return r
}

func anyValue(text []byte) result {
	var v interface{}
	if err := yaml.Unmarshal(text, &v); err != nil {
		return result{Error: err.Error()}
	}
	return result{OK: true, Value: dump(v), Sprint: fmt.Sprint(v)}
}

func toJSON(text []byte, strict bool) result {
	var out []byte
	var err error
	if strict {
		out, err = syaml.YAMLToJSONStrict(text)
	} else {
		out, err = syaml.YAMLToJSON(text)
	}
	if err != nil {
		return result{Error: err.Error()}
	}
	return result{OK: true, JSON: string(out)}
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		var doc input
		if err := json.Unmarshal(in.Bytes(), &doc); err != nil {
			fmt.Fprintln(os.Stderr, "goyaml-oracle: bad input line:", err)
			os.Exit(2)
		}
		text := []byte(doc.Text)
		o := output{
			ID:     doc.ID,
			K3s:    protect(func() result { return k3s(text) }),
			Any:    protect(func() result { return anyValue(text) }),
			Strict: protect(func() result { return toJSON(text, true) }),
			JSON:   protect(func() result { return toJSON(text, false) }),
		}
		fmt.Fprintln(out, marshal(o))
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "goyaml-oracle:", err)
		os.Exit(2)
	}
}
