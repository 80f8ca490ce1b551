package store

import (
	"bytes"
	"encoding/base64"
	"os"
	"testing"

	bolt "go.etcd.io/bbolt"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/secret"
)

// TestSecretsNeverStored writes Secrets and searches the raw file, and
// every value of it decompressed, for their clear values.
func TestSecretsNeverStored(t *testing.T) {
	password := "correct-horse-battery-staple-7"
	token := "ghp_0123456789abcdefghijklmnopqrstuvwxyz"
	cert := "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"
	lastApplied := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db"},"stringData":{"password":"` + password + `"}}`
	secrets := []*unstructured.Unstructured{
		{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
			"metadata": map[string]any{
				"name": "db", "namespace": "prod", "resourceVersion": "12",
				"annotations": map[string]any{secret.LastAppliedAnnotation: lastApplied},
				"managedFields": []any{map[string]any{
					"manager": "kubectl", "operation": "Apply", "fieldsType": "FieldsV1",
					"fieldsV1": map[string]any{"f:data": map[string]any{"f:password": map[string]any{}}},
				}},
			},
			"data": map[string]any{
				"password": base64.StdEncoding.EncodeToString([]byte(password)),
				"tls.key":  base64.StdEncoding.EncodeToString([]byte(cert)),
			},
		}},
		{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata":   map[string]any{"name": "api", "namespace": "prod"},
			"stringData": map[string]any{"token": token, "password": password},
		}},
	}
	var clear []string
	for _, s := range secrets {
		clear = append(clear, secret.Values(s)...)
	}
	clear = append(clear, "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC") // one line of a multi-line value

	db := openTest(t)
	put(t, db, Before, append(newApp(20).objs, secrets...))
	digests := []string{
		db.Redactor().Digest([]byte(password)),
		db.Redactor().Digest([]byte(token)),
		db.Redactor().Digest([]byte(cert)),
		db.Redactor().Digest([]byte(lastApplied)),
	}
	db.Close()

	raw, err := os.ReadFile(db.Path())
	if err != nil {
		t.Fatal(err)
	}
	haystacks := [][]byte{raw}
	b, err := bolt.Open(db.Path(), 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	b.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketBlobs).ForEach(func(k, v []byte) error {
			d, err := decompress(v)
			if err != nil {
				t.Errorf("blob %x: %v", k, err)
			}
			haystacks = append(haystacks, d)
			return nil
		})
	})
	if len(haystacks) < 22 {
		t.Fatalf("found %d blobs, want at least 22 objects", len(haystacks)-1)
	}
	all := bytes.Join(haystacks, []byte{0})
	for _, v := range clear {
		if bytes.Contains(all, []byte(v)) {
			t.Errorf("the store holds the clear value %q", v)
		}
	}
	for _, d := range digests {
		if !bytes.Contains(all, []byte(d)) {
			t.Errorf("the store does not hold the digest %s", d)
		}
	}
	if bytes.Contains(all, []byte(secret.LastAppliedAnnotation)) == false {
		t.Error("the last-applied annotation's key is gone; only its value should be")
	}
}
