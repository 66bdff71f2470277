#!/usr/bin/env python3
"""Report training progress to the TrainJob status server as the Kubeflow Python SDK does.

The Kubeflow SDK's update_trainjob_status() and the Hugging Face Transformers
KubeflowTrainerCallback read three variables the TrainJobStatus plugin injects into every trainer
container, and POST one JSON document:

  KUBEFLOW_TRAINER_SERVER_URL      https://<service>.<namespace>.svc:10443/apis/trainer.kubeflow.org/
                                   v1alpha1/namespaces/<ns>/trainjobs/<name>/status
  KUBEFLOW_TRAINER_SERVER_CA_CERT  the CA file that verifies the server's certificate
  KUBEFLOW_TRAINER_SERVER_TOKEN    the projected service-account token file, sent as a Bearer token

  {"trainerStatus": {"progressPercentage": 42, "estimatedRemainingSeconds": 120,
                     "metrics": [{"name": "loss", "value": "0.123"}],
                     "lastUpdatedTime": "2025-01-23T10:30:45Z"}}

Only HTTP 200 is success. The standard library only: the test machines have no PyPI access.

Usage: update_status.py [--progress N] [--eta SECONDS] [--metric NAME=VALUE ...]
Prints the HTTP status code and the response body; exits 0 on 200, 1 otherwise.
"""

import argparse
import datetime
import json
import os
import ssl
import sys
import urllib.error
import urllib.request


def update_trainjob_status(progress=None, estimated_remaining_seconds=None, metrics=None):
    """POST one status report; returns (code, body)."""
    url = os.environ["KUBEFLOW_TRAINER_SERVER_URL"]
    with open(os.environ["KUBEFLOW_TRAINER_SERVER_TOKEN"], encoding="utf-8") as f:
        token = f.read().strip()
    context = ssl.create_default_context(cafile=os.environ["KUBEFLOW_TRAINER_SERVER_CA_CERT"])

    status = {}
    if progress is not None:
        status["progressPercentage"] = progress
    if estimated_remaining_seconds is not None:
        status["estimatedRemainingSeconds"] = estimated_remaining_seconds
    if metrics:
        status["metrics"] = [{"name": k, "value": str(v)} for k, v in metrics.items()]
    now = datetime.datetime.now(datetime.timezone.utc)
    status["lastUpdatedTime"] = now.strftime("%Y-%m-%dT%H:%M:%SZ")

    request = urllib.request.Request(
        url,
        data=json.dumps({"trainerStatus": status}).encode("utf-8"),
        method="POST",
        headers={"Content-Type": "application/json", "Authorization": "Bearer " + token},
    )
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as response:
            return response.status, response.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--progress", type=int)
    parser.add_argument("--eta", type=int)
    parser.add_argument("--metric", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args()
    metrics = dict(m.split("=", 1) for m in args.metric)
    code, body = update_trainjob_status(args.progress, args.eta, metrics)
    print(code, body.strip())
    return 0 if code == 200 else 1


if __name__ == "__main__":
    sys.exit(main())
