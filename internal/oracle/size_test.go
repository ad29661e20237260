package oracle

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crdguard/crdguard/internal/crd"
)

// paddedCRD is a CRD whose one description is n bytes long, named by i (names of one length,
// so every CRD's key is as long as the others').
func paddedCRD(t *testing.T, i, n int) *crd.CRD {
	t.Helper()
	plural := fmt.Sprintf("pad%05d", i)
	doc := fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[1]s.example.com
spec:
  group: example.com
  names: {kind: Pad%05[2]d, listKind: Pad%05[2]dList, plural: %[1]s, singular: %[1]s}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        description: %[3]s
`, plural, i, strings.Repeat("x", n))
	cs, problems := crd.Parse("pad.yaml", []byte(doc))
	if len(problems) > 0 || len(cs) != 1 {
		t.Fatalf("parsing the padded CRD: %v", problems)
	}
	return cs[0]
}

// TestStorageLimitAgainstEtcd stores CRDs just under and just over etcd's request limit through
// the in-process API server (kube-apiserver's protobuf storage encoding, etcd's default
// --max-request-bytes) and checks crdguard's StoredSize against what the server does: the
// largest CRD the server stores measures at most crd.StorageLimit (crdguard never calls a
// storable CRD unstorable), and one byte more is refused with etcd's own error.
func TestStorageLimitAgainstEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and an API server")
	}
	s := StartWithFlags(t, "--storage-media-type=application/vnd.kubernetes.protobuf")
	crds := s.CRDs.ApiextensionsV1().CustomResourceDefinitions()
	ctx := context.Background()
	attempt := 0
	create := func(n int) (*crd.CRD, error) {
		attempt++
		c := paddedCRD(t, attempt, n)
		_, err := crds.Create(ctx, c.Object.DeepCopy(), metav1.CreateOptions{})
		return c, err
	}
	// The largest description the server stores, by bisection.
	lo, hi := 1<<20, crd.StorageLimit
	if _, err := create(lo); err != nil {
		t.Fatalf("a CRD of 1 MiB was refused: %v", err)
	}
	if _, err := create(hi); err == nil {
		t.Fatalf("a CRD with a description of %d bytes was stored", hi)
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if _, err := create(mid); err == nil {
			lo = mid
		} else {
			hi = mid
		}
	}
	under, err := create(lo)
	if err != nil {
		t.Fatalf("the largest CRD stored before is refused now: %v", err)
	}
	over, err := create(lo + 1)
	const want = "etcdserver: request is too large"
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("one byte more: got %v, want the server's %q", err, want)
	}
	key := "/" + strings.Trim(s.Prefix, "/") + "/apiextensions.k8s.io/customresourcedefinitions/" + under.Name
	stored, err := s.Etcd.Get(ctx, key)
	if err != nil || len(stored.Kvs) != 1 {
		t.Fatalf("reading the stored CRD: %v", err)
	}
	// The exact boundary: the largest create etcd took is its value, its key twice and the
	// framing crdguard assumes (its request ID varies in length by a byte), and that is the
	// limit itself.
	if got := len(stored.Kvs[0].Value) + 2*len(key) + crd.StorageFraming; got != crd.StorageLimit && got != crd.StorageLimit-1 {
		t.Errorf("the largest create etcd took measures %d bytes (value %d, key %d), want the limit %d (or one less)", got, len(stored.Kvs[0].Value), len(key), crd.StorageLimit)
	}
	// This server stores CRDs as v1beta1 JSON (kube-apiserver: v1 protobuf). Measured with its
	// encoding and key, crdguard's size is that request's, to the byte of the request ID.
	codec := internalFirst{apiserver.Codecs.LegacyCodec(apiextv1beta1.SchemeGroupVersion)}
	underSize, err := under.StoredSizeAs(codec)
	if err != nil {
		t.Fatal(err)
	}
	overSize, err := over.StoredSizeAs(codec)
	if err != nil {
		t.Fatal(err)
	}
	longer := 2 * (len(key) - len(crd.StorageKey(under.Name)))
	if underSize+longer != crd.StorageLimit && underSize+longer != crd.StorageLimit-1 || overSize != underSize+1 {
		t.Errorf("crdguard measures %d (stored) and %d (refused), with this server's longer key %d and %d, around the limit %d", underSize, overSize, underSize+longer, overSize+longer, crd.StorageLimit)
	}
	// kube-apiserver's encoding is smaller: the same CRD measures less there.
	proto, err := under.StoredSize()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the largest CRD this server stores: %d bytes as v1beta1 JSON, %d as kube-apiserver's v1 protobuf; the server said %q", underSize, proto, want)
}

// internalFirst encodes an object as the API server does: from its internal version (the
// scheme converts v1 to v1beta1 only through it).
type internalFirst struct{ runtime.Encoder }

// Encode converts obj to the internal version and encodes that.
func (e internalFirst) Encode(obj runtime.Object, w io.Writer) error {
	in, err := apiserver.Scheme.ConvertToVersion(obj, apiextensions.SchemeGroupVersion)
	if err != nil {
		return err
	}
	return e.Encoder.Encode(in, w)
}
