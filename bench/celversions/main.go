// Command celversions prints what one apiextensions-apiserver version's CRD validation says about
// CEL (compilation, cost) for each CRD file named on standard input, one line per error, sorted.
// run.sh builds it against each Kubernetes minor and compares: that is how crdguard learned
// which minor accepts each CEL library in a new rule, and that older minors refuse the corpus
// CRDs for cost exactly as the linked one does. It needs the network (the module proxy), so no
// test runs it.
package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

func main() {
	s := runtime.NewScheme()
	install.Install(s)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		path := in.Text()
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "celversions:", err)
			os.Exit(1)
		}
		v1 := &apiextv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, v1); err != nil {
			fmt.Println(path, "| not a CRD:", err)
			continue
		}
		s.Default(v1)
		crd := &apiextensions.CustomResourceDefinition{}
		if err := s.Convert(v1, crd, nil); err != nil {
			fmt.Println(path, "| not converted:", err)
			continue
		}
		crd.Status = apiextensions.CustomResourceDefinitionStatus{StoredVersions: []string{}}
		for _, v := range crd.Spec.Versions {
			if v.Storage {
				crd.Status.StoredVersions = append(crd.Status.StoredVersions, v.Name)
			}
		}
		var lines []string
		for _, e := range validation.ValidateCustomResourceDefinition(context.Background(), crd) {
			if m := e.Error(); strings.Contains(m, "x-kubernetes-validations") || strings.Contains(m, "cost") {
				lines = append(lines, e.Field)
			}
		}
		sort.Strings(lines)
		for _, l := range lines {
			fmt.Println(path, "|", l)
		}
	}
}
