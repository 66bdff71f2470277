/*
Copyright 2026 The Gantry Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/gantry-ml/gantry/internal/manifest"
	"github.com/gantry-ml/gantry/test/localcluster"
	"github.com/gantry-ml/gantry/test/util"
)

// unexercised are the permissions of config/rbac no spec can make the manager use, each with
// the reason it is granted anyway. Keys are "<group>/<resource> <verb>" ("*" for every verb).
var unexercised = map[string]string{
	// Asked by the OwnerReferencesPermissionEnforcement admission plugin (OpenShift turns it on)
	// when the manager creates an object owned by a TrainJob with blockOwnerDeletion: an
	// authorization check inside the apiserver, never a request of the manager's, so no audit
	// log shows it.
	"trainer.kubeflow.org/trainjobs/finalizers update": "checked by OwnerReferencesPermissionEnforcement, not requested",
	// The OptimizationJob controller's trials carry an owner reference with blockOwnerDeletion:
	// the same check (issue 38).
	"trainer.kubeflow.org/optimizationjobs/finalizers update": "checked by OwnerReferencesPermissionEnforcement, not requested",
	// The OptimizationJob controller reads OptimizationJobs from its cache, which lists and
	// watches them (the OptimizationJob spec exercises both); get is granted with them, as
	// kubebuilder's markers do for every kind read, and never requested.
	// No module the repository pins ships Volcano's PodGroup CRD, so the local cluster cannot
	// serve the kind; the Volcano plugin writes and watches its PodGroups as the coscheduling
	// plugin does (podgroup.Desired, the owned-kind watch), which a spec exercises.
	"scheduling.volcano.sh/podgroups *": "no Volcano CRD in the local cluster",
}

// After every spec, the manager's requests (the apiserver audits each one, localcluster
// auditPolicy) are held against the roles config/rbac ships, which the local cluster runs it
// with (localcluster installManagerIdentity): a request refused is a rule the code needs and
// the install lacks; a permission no request used, unless listed in unexercised, is a rule no
// code path needs. The second check needs the whole suite to have run and passed. It is a
// ReportAfterSuite because that is the one suite node that runs after every spec and of which a
// suite may have several.
var _ = ginkgo.ReportAfterSuite("the manager's RBAC against its requests", func(r ginkgo.Report) {
	if cluster == nil {
		return
	}
	events, err := readManagerAudit(cluster.AuditLog())
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "reading the audit log; the cluster needs Settings.Audit (the default)")
	gomega.Expect(events).NotTo(gomega.BeEmpty(), "the audit log records no request of %s: the cluster was started by an older checkout; bring it down and up again", localcluster.ManagerUser)
	refused := map[string]int{}
	for _, e := range events {
		if e.refused() {
			refused[e.String()]++
		}
	}
	if len(refused) > 0 {
		var lines []string
		for req, n := range refused {
			lines = append(lines, fmt.Sprintf("%s (%d times)", req, n))
		}
		sort.Strings(lines)
		ginkgo.Fail("requests of the manager that its RBAC (config/rbac) refused:\n  " + strings.Join(lines, "\n  "))
	}

	if notRun := specsNotPassed(r); notRun > 0 {
		fmt.Fprintf(os.Stderr, "RBAC: unused permissions not checked: %d specs did not run or pass\n", notRun)
		return
	}
	data, err := util.Kustomize("config/rbac")
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	roles, err := shippedRoles(data)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	if unused := unusedPermissions(roles, localcluster.ManagerNamespace, events); len(unused) > 0 {
		ginkgo.Fail("permissions config/rbac grants that no request of the manager used (remove them, or exercise them in a spec):\n  " +
			strings.Join(unused, "\n  "))
	}
})

func specsNotPassed(r ginkgo.Report) int {
	n := 0
	for _, s := range r.SpecReports {
		if s.LeafNodeType == types.NodeTypeIt && !s.State.Is(types.SpecStatePassed) {
			n++
		}
	}
	return n
}

// auditEvent is the part of an apiserver audit event (audit.k8s.io/v1, Metadata level) the
// check reads.
type auditEvent struct {
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef      *objectRef `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	Annotations map[string]string `json:"annotations"`
}

type objectRef struct {
	APIGroup    string `json:"apiGroup"`
	Resource    string `json:"resource"`
	Subresource string `json:"subresource"`
	Namespace   string `json:"namespace"`
	Name        string `json:"name"`
}

func (e auditEvent) resource() string {
	if e.ObjectRef.Subresource != "" {
		return e.ObjectRef.Resource + "/" + e.ObjectRef.Subresource
	}
	return e.ObjectRef.Resource
}

func (e auditEvent) watchList() bool {
	u, err := url.Parse(e.RequestURI)
	return err == nil && u.Query().Get("sendInitialEvents") == "true"
}

// refused reports an RBAC refusal; other 403s (a create in a namespace being deleted) are not.
func (e auditEvent) refused() bool {
	return e.Annotations["authorization.k8s.io/decision"] == "forbid"
}

func (e auditEvent) String() string {
	if e.ObjectRef == nil {
		return fmt.Sprintf("%s %s -> %d", e.Verb, e.RequestURI, e.ResponseStatus.Code)
	}
	return fmt.Sprintf("%s %s/%s %s/%s -> %d", e.Verb, e.ObjectRef.APIGroup, e.resource(),
		e.ObjectRef.Namespace, e.ObjectRef.Name, e.ResponseStatus.Code)
}

// readManagerAudit returns the manager's requests, each once (the event of its last stage).
func readManagerAudit(path string) ([]auditEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var events []auditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e struct {
			auditEvent
			Stage string `json:"stage"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		// A watch still open has only its ResponseStarted event; other requests end complete.
		if e.User.Username == localcluster.ManagerUser && (e.Stage == "ResponseComplete" || e.Stage == "ResponseStarted" && e.Verb == "watch") {
			events = append(events, e.auditEvent)
		}
	}
	return events, sc.Err()
}

// role is one Role or ClusterRole of config/rbac; namespace is empty for a ClusterRole.
type role struct {
	kind, namespace, name string
	rules                 []rbacv1.PolicyRule
}

func shippedRoles(data []byte) ([]role, error) {
	objs, err := manifest.Decode(data)
	if err != nil {
		return nil, err
	}
	var roles []role
	for _, o := range objs {
		if o.GetKind() != "Role" && o.GetKind() != "ClusterRole" {
			continue
		}
		var cr rbacv1.ClusterRole
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &cr); err != nil {
			return nil, fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
		}
		roles = append(roles, role{kind: o.GetKind(), namespace: o.GetNamespace(), name: o.GetName(), rules: cr.Rules})
	}
	return roles, nil
}

// permission is one verb on one resource of one rule.
type permission struct {
	role                  *role
	rule                  int
	group, resource, verb string
}

func (p permission) key() string { return p.group + "/" + p.resource + " " + p.verb }

func (p permission) names() []string { return p.role.rules[p.rule].ResourceNames }

func (p permission) String() string {
	r := p.role.rules[p.rule]
	scope := p.role.kind + " " + p.role.name
	if p.role.namespace != "" {
		scope = p.role.kind + " " + p.role.namespace + "/" + p.role.name
	}
	names := ""
	if len(r.ResourceNames) > 0 {
		names = fmt.Sprintf(" resourceNames %v", r.ResourceNames)
	}
	return fmt.Sprintf("%s: %s %q in rule {apiGroups %q resources %v%s verbs %v}", scope, p.verb, p.group+"/"+p.resource, r.APIGroups, r.Resources, names, r.Verbs)
}

// allows reports whether p's rule authorizes the request e. Two requests stand for a second
// verb: a watch that streams the initial state (sendInitialEvents, how informers start where the
// apiserver serves it) for the list the informer makes instead where it does not (before 1.32),
// and a patch or update that created its object (201: server-side apply) for the create the
// apiserver then authorizes as well, inside the same request.
func (p permission) allows(e auditEvent) bool {
	verb := e.Verb
	switch {
	case p.verb == "list" && verb == "watch" && e.watchList():
		verb = "list"
	case p.verb == "create" && (verb == "patch" || verb == "update") && e.ResponseStatus.Code == http.StatusCreated:
		verb = "create"
	}
	if e.ObjectRef == nil || e.ObjectRef.APIGroup != p.group || e.resource() != p.resource || verb != p.verb {
		return false
	}
	if p.role.namespace != "" && e.ObjectRef.Namespace != p.role.namespace {
		return false
	}
	return len(p.names()) == 0 || slices.Contains(p.names(), e.ObjectRef.Name)
}

// covers reports whether q grants everything p does, from another rule.
func (q permission) covers(p permission) bool {
	if q.role == p.role && q.rule == p.rule || q.key() != p.key() {
		return false
	}
	if q.role.namespace != "" && q.role.namespace != p.role.namespace {
		return false
	}
	if len(q.names()) == 0 {
		return true
	}
	if len(p.names()) == 0 {
		return false
	}
	for _, n := range p.names() {
		if !slices.Contains(q.names(), n) {
			return false
		}
	}
	return true
}

func permissions(roles []role) []permission {
	var ps []permission
	for i := range roles {
		for j, r := range roles[i].rules {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						ps = append(ps, permission{role: &roles[i], rule: j, group: g, resource: res, verb: v})
					}
				}
			}
		}
	}
	return ps
}

// unusedPermissions lists, naming each rule, the permissions no request used (unless
// unexercised says why), those another rule already grants, and those of the ClusterRole that
// only requests in the manager's own namespace used: they belong in a Role there.
func unusedPermissions(roles []role, managerNS string, events []auditEvent) []string {
	ps := permissions(roles)
	var out []string
	for _, p := range ps {
		if i := slices.IndexFunc(ps, func(q permission) bool { return q.covers(p) }); i >= 0 {
			out = append(out, fmt.Sprintf("%s: also granted by %s", p, ps[i].role.kind+" "+ps[i].role.name))
			continue
		}
		if _, ok := unexercised[p.key()]; ok {
			continue
		}
		if _, ok := unexercised[p.group+"/"+p.resource+" *"]; ok {
			continue
		}
		var namespaces []string
		for _, e := range events {
			if p.allows(e) && !slices.Contains(namespaces, e.ObjectRef.Namespace) {
				namespaces = append(namespaces, e.ObjectRef.Namespace)
			}
		}
		switch {
		case len(namespaces) == 0:
			out = append(out, p.String()+": never used")
		case p.role.namespace == "" && slices.Equal(namespaces, []string{managerNS}):
			out = append(out, fmt.Sprintf("%s: used only in namespace %s, where a Role can grant it", p, managerNS))
		}
	}
	sort.Strings(out)
	return out
}

// The check's own logic: which permissions count as used, covered or missing.
func TestUnusedPermissions(t *testing.T) {
	roles, err := shippedRoles([]byte(`
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: c}
rules:
- {apiGroups: [""], resources: [secrets], verbs: [get, list, patch, watch]}
- {apiGroups: [trainer.kubeflow.org], resources: [trainjobs/finalizers], verbs: [update]}
- {apiGroups: [jobset.x-k8s.io], resources: [jobsets], verbs: [create, patch]}
- {apiGroups: [scheduling.x-k8s.io], resources: [podgroups], verbs: [create, patch]}
- {apiGroups: [""], resources: [configmaps], verbs: [update]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: r, namespace: ns}
rules:
- {apiGroups: [""], resources: [secrets], resourceNames: [cert], verbs: [get, update]}
- {apiGroups: [coordination.k8s.io], resources: [leases], resourceNames: [lock], verbs: [update]}
`))
	if err != nil {
		t.Fatal(err)
	}
	ev := func(verb, group, resource, ns, name string) auditEvent {
		return auditEvent{Verb: verb, ObjectRef: &objectRef{APIGroup: group, Resource: resource, Namespace: ns, Name: name}}
	}
	created := func(verb, group, resource string, code int) auditEvent {
		e := ev(verb, group, resource, "other", "x")
		e.ResponseStatus.Code = code
		return e
	}
	got := unusedPermissions(roles, "ns", []auditEvent{
		ev("get", "", "secrets", "other", "x"),
		ev("update", "", "secrets", "ns", "cert"),
		ev("update", "coordination.k8s.io", "leases", "other", "lock"),
		{Verb: "watch", RequestURI: "/api/v1/secrets?watch=true&sendInitialEvents=true", ObjectRef: &objectRef{Resource: "secrets"}},
		created("patch", "jobset.x-k8s.io", "jobsets", 201),
		created("patch", "scheduling.x-k8s.io", "podgroups", 200),
		ev("update", "", "configmaps", "ns", "x"),
	})
	want := []string{
		`ClusterRole c: create "scheduling.x-k8s.io/podgroups" in rule {apiGroups ["scheduling.x-k8s.io"] resources [podgroups] verbs [create patch]}: never used`,
		`ClusterRole c: patch "/secrets" in rule {apiGroups [""] resources [secrets] verbs [get list patch watch]}: never used`,
		`ClusterRole c: update "/configmaps" in rule {apiGroups [""] resources [configmaps] verbs [update]}: used only in namespace ns, where a Role can grant it`,
		`Role ns/r: get "/secrets" in rule {apiGroups [""] resources [secrets] resourceNames [cert] verbs [get update]}: also granted by ClusterRole c`,
		`Role ns/r: update "coordination.k8s.io/leases" in rule {apiGroups ["coordination.k8s.io"] resources [leases] resourceNames [lock] verbs [update]}: never used`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unused permissions (-want,+got):\n%s", diff)
	}
}
