package kubeapi

import (
	"context"
	"net/http"
	"net/url"
)

// Secret is the part of a v1 Secret the double reads and writes (Data's
// values are base64 on the wire, as []byte marshals).
type Secret struct {
	APIVersion string            `json:"apiVersion,omitempty"`
	Kind       string            `json:"kind,omitempty"`
	Metadata   Meta              `json:"metadata"`
	Immutable  *bool             `json:"immutable,omitempty"`
	Type       string            `json:"type,omitempty"`
	Data       map[string][]byte `json:"data,omitempty"`
}

// SecretList is a v1 SecretList.
type SecretList struct {
	Items []Secret `json:"items"`
}

func secretsPath(ns string) string { return "/api/v1/namespaces/" + url.PathEscape(ns) + "/secrets" }

// GetSecret reads namespace/name.
func (c *Client) GetSecret(ctx context.Context, ns, name string) (Secret, error) {
	var s Secret
	err := c.Get(ctx, secretsPath(ns)+"/"+url.PathEscape(name), &s)
	return s, err
}

// CreateSecret creates s in its namespace and returns the stored object.
func (c *Client) CreateSecret(ctx context.Context, s Secret) (Secret, error) {
	s.APIVersion, s.Kind = "v1", "Secret"
	var stored Secret
	err := c.Do(ctx, http.MethodPost, secretsPath(s.Metadata.Namespace), s, "", &stored)
	return stored, err
}

// ListSecrets lists a namespace's Secrets, filtered by fieldSelector
// (e.g. "type=k3s.cattle.io/node-password") when not empty.
func (c *Client) ListSecrets(ctx context.Context, ns, fieldSelector string) ([]Secret, error) {
	path := secretsPath(ns)
	if fieldSelector != "" {
		path += "?fieldSelector=" + url.QueryEscape(fieldSelector)
	}
	var l SecretList
	err := c.Get(ctx, path, &l)
	return l.Items, err
}

// SetSecretOwners sets a Secret's ownerReferences (a merge patch that
// carries resourceVersion, so a concurrent change makes it fail with 409).
func (c *Client) SetSecretOwners(ctx context.Context, ns, name, resourceVersion string, owners []OwnerReference) error {
	patch := map[string]any{"metadata": map[string]any{"ownerReferences": owners, "resourceVersion": resourceVersion}}
	return c.Do(ctx, http.MethodPatch, secretsPath(ns)+"/"+url.PathEscape(name), patch, MergePatch, nil)
}

// DeleteSecret deletes namespace/name if its UID is still uid (a
// precondition, as k3s deletes orphaned node-password Secrets).
func (c *Client) DeleteSecret(ctx context.Context, ns, name, uid string) error {
	opts := map[string]any{"kind": "DeleteOptions", "apiVersion": "v1"}
	if uid != "" {
		opts["preconditions"] = map[string]any{"uid": uid}
	}
	return c.Do(ctx, http.MethodDelete, secretsPath(ns)+"/"+url.PathEscape(name), opts, "", nil)
}
