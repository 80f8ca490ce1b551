package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/snapply/snapply/internal/engine"
	"github.com/snapply/snapply/internal/store"
)

// storeTimeout is how long the store commands wait for another snapply
// that uses the file.
const storeTimeout = 30 * time.Second

func newStoreCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:         "store",
		Annotations: map[string]string{offline: "true"},
		Short:       "Encrypt, decrypt or rekey a store file",
		Long: `store converts a store file in place. An encrypted store file is an age file
(filippo.io/age) after one plain header line that names the ID of its key
(not the key): whoever holds the file and not the key learns nothing of the
cluster from it. plan, apply and rollback write the store encrypted whenever
a store key is set, and every command opens an encrypted store given its key.

The key is read from an environment variable, never from a flag: 64 hex
characters (openssl rand -hex 32), base64 of 32 bytes, or a passphrase
(stretched with scrypt; only as strong as it is long and random).

Secret values sealed in the store stay sealed with the key they were sealed
with: after a rekey, a rollback restores them only with the old key, and
otherwise leaves those Secrets as they are live.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(
		newStoreConvertCommand(g, "encrypt", "Encrypt a plain store file with the store key", store.EncryptStore),
		newStoreConvertCommand(g, "decrypt", "Replace an encrypted store file with its plain store", store.DecryptStore),
		newStoreRekeyCommand(g),
	)
	return cmd
}

// newStoreConvertCommand returns `snapply store encrypt` or `decrypt`.
func newStoreConvertCommand(g *globals, verb, short string, convert func(string, []byte, time.Duration) error) *cobra.Command {
	path, k := store.DefaultPath, engine.StoreKey{}
	cmd := &cobra.Command{
		Use:     verb,
		Short:   short,
		Example: fmt.Sprintf("  SNAPPLY_STORE_KEY=$(cat key) snapply store %s --store snapply.db", verb),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key, err := requireKey(k)
			if err != nil {
				return err
			}
			if err := convert(path, key, storeTimeout); err != nil {
				return k.Explain(err)
			}
			if verb == "encrypt" {
				g.progress("%s: encrypted with key ID %s", path, store.KeyID(key))
			} else {
				g.progress("%s: decrypted: the file is plain, keep it private", path)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&path, "store", path, "store file")
	addStoreKeyFlag(cmd.Flags(), &k.Env)
	return cmd
}

func newStoreRekeyCommand(g *globals) *cobra.Command {
	path, old, next := store.DefaultPath, engine.StoreKey{}, engine.StoreKey{}
	cmd := &cobra.Command{
		Use:   "rekey --new-key-env NAME",
		Short: "Re-encrypt an encrypted store file with a new key",
		Long: `rekey re-encrypts an encrypted store file with the key in --new-key-env; it
must open with the key in --old-key-env. Afterwards only the new key opens it.`,
		Example: `  SNAPPLY_STORE_KEY=$(cat old) NEW_KEY=$(openssl rand -hex 32) snapply store rekey --new-key-env NEW_KEY`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			oldKey, err := requireKey(old)
			if err != nil {
				return err
			}
			newKey, err := requireKey(next)
			if err != nil {
				return err
			}
			if store.KeyID(oldKey) == store.KeyID(newKey) {
				return fmt.Errorf("%s and %s hold the same key", old.Env, next.Env)
			}
			if err := store.RekeyStore(path, oldKey, newKey, storeTimeout); err != nil {
				return old.Explain(err)
			}
			g.progress("%s: re-encrypted with key ID %s (was %s)", path, store.KeyID(newKey), store.KeyID(oldKey))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&path, "store", path, "store file")
	f.StringVar(&old.Env, "old-key-env", store.KeyEnv, "environment variable that holds the key the file is encrypted with")
	f.StringVar(&next.Env, "new-key-env", "", "environment variable that holds the new key (required)")
	_ = cmd.MarkFlagRequired("new-key-env")
	return cmd
}

// requireKey reads the key k names, which must be set.
func requireKey(k engine.StoreKey) ([]byte, error) {
	key, err := k.Read(os.Getenv)
	if err != nil {
		return nil, err
	}
	if key == nil {
		return nil, fmt.Errorf("%s is not set: it must hold the store key", k.Env)
	}
	return key, nil
}
