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

package statusserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/trainjobstatus"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
	"github.com/gantry-ml/gantry/test/util"
)

// jwtParts decodes a token's header and claims, to re-sign them changed.
func jwtParts(token string) (header, claims map[string]any) {
	parts := strings.Split(token, ".")
	gomega.Expect(parts).To(gomega.HaveLen(3))
	for i, into := range []*map[string]any{&header, &claims} {
		data, err := base64.RawURLEncoding.DecodeString(parts[i])
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(json.Unmarshal(data, into)).To(gomega.Succeed())
	}
	return header, claims
}

var _ = ginkgo.Describe("The status server", func() {
	var ns string
	ginkgo.BeforeEach(func() { ns = newNamespace() })

	ginkgo.It("applies a report with a valid token, and a second one replaces the first whole", func() {
		tj := newTrainJob(ns, "job")
		token := tokenFor(tj)
		at := time.Now().UTC().Truncate(time.Second)
		first := report(42, 120, at, trainer.Metric{Name: "loss", Value: "0.123"}, trainer.Metric{Name: "accuracy", Value: "0.95"})
		gomega.Eventually(func(g gomega.Gomega) {
			code, body := post(g, statusURL(ns, "job"), token, first)
			g.Expect(code).To(gomega.Equal(http.StatusOK), body)
			g.Expect(body).To(gomega.MatchJSON(first), "the request is echoed")
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Expect(trainerStatus(gomega.Default, tj)).To(gomega.Equal(&trainer.TrainJobTrainerStatus{
			ProgressPercentage: ptr.To[int32](42), EstimatedRemainingSeconds: ptr.To[int32](120),
			Metrics:         []trainer.Metric{{Name: "loss", Value: "0.123"}, {Name: "accuracy", Value: "0.95"}},
			LastUpdatedTime: metav1.NewTime(at),
		}))

		ginkgo.By("a second report without an ETA and with one metric")
		later := at.Add(time.Minute)
		second := fmt.Sprintf(`{"trainerStatus":{"progressPercentage":50,"metrics":[{"name":"loss","value":"0.1"}],"lastUpdatedTime":%q}}`,
			later.Format(time.RFC3339))
		code, body := post(gomega.Default, statusURL(ns, "job"), token, second)
		gomega.Expect(code).To(gomega.Equal(http.StatusOK), body)
		gomega.Expect(trainerStatus(gomega.Default, tj)).To(gomega.Equal(&trainer.TrainJobTrainerStatus{
			ProgressPercentage: ptr.To[int32](50),
			Metrics:            []trainer.Metric{{Name: "loss", Value: "0.1"}},
			LastUpdatedTime:    metav1.NewTime(later),
		}), "the metrics list and the ETA are replaced, not merged")

		ginkgo.By("an empty request")
		code, body = post(gomega.Default, statusURL(ns, "job"), token, `{}`)
		gomega.Expect(code).To(gomega.Equal(http.StatusOK), body)
		gomega.Expect(body).To(gomega.MatchJSON(`{}`))
		gomega.Expect(trainerStatus(gomega.Default, tj).ProgressPercentage).To(gomega.Equal(ptr.To[int32](50)))

		ginkgo.By("a TrainJob field owner of its own")
		cur := &trainer.TrainJob{}
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), cur)).To(gomega.Succeed())
		var managers []string
		for _, mf := range cur.ManagedFields {
			if mf.Subresource == "status" && mf.Operation == metav1.ManagedFieldsOperationApply {
				managers = append(managers, mf.Manager)
			}
		}
		gomega.Expect(managers).To(gomega.ConsistOf("trainer-status"))
	})

	ginkgo.It("refuses a progress over 100 with the apiserver's message, and answers 404 for a missing TrainJob", func() {
		tj := newTrainJob(ns, "job")
		code, body := post(gomega.Default, statusURL(ns, "job"), tokenFor(tj), report(101, 1, time.Now()))
		gomega.Expect(code).To(gomega.Equal(http.StatusUnprocessableEntity), body)
		s := decodeStatus(body)
		gomega.Expect(s.Code).To(gomega.Equal(int32(http.StatusUnprocessableEntity)))
		gomega.Expect(s.Message).To(gomega.ContainSubstring("status.trainerStatus.progressPercentage"))
		gomega.Expect(s.Message).To(gomega.ContainSubstring("100"))
		gomega.Expect(trainerStatus(gomega.Default, tj)).To(gomega.BeNil())

		ginkgo.By("no lastUpdatedTime")
		code, body = post(gomega.Default, statusURL(ns, "job"), tokenFor(tj), `{"trainerStatus":{"progressPercentage":1}}`)
		gomega.Expect(code).To(gomega.Equal(http.StatusUnprocessableEntity), body)
		gomega.Expect(decodeStatus(body).Message).To(gomega.ContainSubstring("lastUpdatedTime is required when trainerStatus is present"))

		ginkgo.By("a valid token for a TrainJob that does not exist")
		ghost := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ghost"}}
		code, body = post(gomega.Default, statusURL(ns, "ghost"), tokenFor(ghost), report(1, 1, time.Now()))
		gomega.Expect(code).To(gomega.Equal(http.StatusNotFound), body)
		gomega.Expect(decodeStatus(body).Message).To(gomega.Equal("Train job not found"))
	})

	ginkgo.DescribeTable("refuses with 403 and changes nothing",
		func(token func(tj *trainer.TrainJob) string) {
			tj := newTrainJob(ns, "job")
			before := report(10, 100, time.Now().UTC().Truncate(time.Second), trainer.Metric{Name: "loss", Value: "1"})
			code, body := post(gomega.Default, statusURL(ns, "job"), tokenFor(tj), before)
			gomega.Expect(code).To(gomega.Equal(http.StatusOK), body)
			want := trainerStatus(gomega.Default, tj)

			code, body = post(gomega.Default, statusURL(ns, "job"), token(tj), report(99, 1, time.Now(), trainer.Metric{Name: "loss", Value: "0"}))
			gomega.Expect(code).To(gomega.Equal(http.StatusForbidden), body)
			s := decodeStatus(body)
			gomega.Expect(s.Reason).To(gomega.Equal(metav1.StatusReasonForbidden))
			gomega.Expect(s.Code).To(gomega.Equal(int32(http.StatusForbidden)))
			gomega.Expect(trainerStatus(gomega.Default, tj)).To(gomega.Equal(want))
		},
		ginkgo.Entry("no token", func(*trainer.TrainJob) string { return "" }),
		ginkgo.Entry("a token for another TrainJob", func(tj *trainer.TrainJob) string {
			token, err := env.RequestToken(ctx, tj.Namespace, "default", 3600, trainjobstatus.Audience(tj.Namespace, "other"))
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			return token
		}),
		ginkgo.Entry("a token for this TrainJob's audience issued in another namespace", func(tj *trainer.TrainJob) string {
			other := newNamespace()
			token, err := env.RequestToken(ctx, other, "default", 3600, trainjobstatus.Audience(tj.Namespace, tj.Name))
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			return token
		}),
		ginkgo.Entry("a token for the apiserver", func(tj *trainer.TrainJob) string {
			token, err := env.RequestToken(ctx, tj.Namespace, "default", 3600)
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			return token
		}),
		ginkgo.Entry("a token for the generic trainer.kubeflow.org audience", func(tj *trainer.TrainJob) string {
			token, err := env.RequestToken(ctx, tj.Namespace, "default", 3600, "trainer.kubeflow.org")
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			return token
		}),
		ginkgo.Entry("a token for this audience and the apiserver's", func(tj *trainer.TrainJob) string {
			token, err := env.RequestToken(ctx, tj.Namespace, "default", 3600, trainjobstatus.Audience(tj.Namespace, tj.Name), env.Config.Host)
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			return token
		}),
		ginkgo.Entry("an expired token, signed by the apiserver's own key", func(tj *trainer.TrainJob) string {
			// TokenRequest issues nothing shorter than 10 minutes, so the test signs an expired
			// token itself with the apiserver's signing key: valid in every respect but time.
			header, claims := jwtParts(tokenFor(tj))
			key, err := env.ServiceAccountSigningKey()
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			now := time.Now()
			claims["iat"], claims["nbf"], claims["exp"] = now.Add(-2*time.Hour).Unix(), now.Add(-2*time.Hour).Unix(), now.Add(-time.Hour).Unix()
			token, err := utiltesting.SignJWT(key, header["kid"].(string), claims)
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			ginkgo.By("the same token, still valid, is accepted")
			claims["exp"] = now.Add(time.Hour).Unix()
			valid, err := utiltesting.SignJWT(key, header["kid"].(string), claims)
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			code, body := post(gomega.Default, statusURL(tj.Namespace, tj.Name), valid, `{}`)
			gomega.Expect(code).To(gomega.Equal(http.StatusOK), body)
			return token
		}),
		ginkgo.Entry("a forged signature under the apiserver's key ID", func(tj *trainer.TrainJob) string {
			header, claims := jwtParts(tokenFor(tj))
			forger, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			token, err := utiltesting.SignJWT(forger, header["kid"].(string), claims)
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			return token
		}),
		ginkgo.Entry("a token with its signature cut off", func(tj *trainer.TrainJob) string {
			t := tokenFor(tj)
			return t[:strings.LastIndex(t, ".")+1]
		}),
	)

	ginkgo.It("lands 100 parallel updates from 10 TrainJobs, each TrainJob ending at its last report", func() {
		const jobs, updates = 10, 10
		tjs := make([]*trainer.TrainJob, jobs)
		tokens := make([]string, jobs)
		for i := range jobs {
			tjs[i] = newTrainJob(ns, fmt.Sprintf("job-%d", i))
			tokens[i] = tokenFor(tjs[i])
		}
		base := time.Now().UTC().Truncate(time.Second)
		var wg sync.WaitGroup
		codes := make(chan string, jobs*updates)
		for i := range jobs {
			wg.Go(func() {
				defer ginkgo.GinkgoRecover()
				// One pod reporting: each report follows the previous one's answer.
				for u := 1; u <= updates; u++ {
					body := report(int32(u*10), int32(updates-u), base.Add(time.Duration(u)*time.Second),
						trainer.Metric{Name: "step", Value: fmt.Sprint(u)}, trainer.Metric{Name: "job", Value: tjs[i].Name})
					code, resp := post(gomega.Default, statusURL(ns, tjs[i].Name), tokens[i], body)
					codes <- fmt.Sprintf("%d %s", code, strings.TrimSpace(resp))
				}
			})
		}
		wg.Wait()
		close(codes)
		ok := 0
		for c := range codes {
			gomega.Expect(c).To(gomega.HavePrefix("200 "))
			ok++
		}
		gomega.Expect(ok).To(gomega.Equal(jobs * updates))
		for _, tj := range tjs {
			gomega.Expect(trainerStatus(gomega.Default, tj)).To(gomega.Equal(&trainer.TrainJobTrainerStatus{
				ProgressPercentage: ptr.To[int32](100), EstimatedRemainingSeconds: ptr.To[int32](0),
				Metrics:         []trainer.Metric{{Name: "step", Value: "10"}, {Name: "job", Value: tj.Name}},
				LastUpdatedTime: metav1.NewTime(base.Add(updates * time.Second)),
			}), tj.Name)
		}
	})
})
