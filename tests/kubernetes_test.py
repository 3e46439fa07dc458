"""Checks deploy/kubernetes/ as the cluster would run it, without a cluster.

The manifests are parsed and checked for what the fleet flow relies on (an Indexed Job whose
completions match the N of --shard i/N, one pod per node, Guaranteed QoS, every mount backed by a
volume); then each container's command line runs here, once per completion index, with its
environment, with each volume a local directory (a fresh one per pod for emptyDir, one shared
directory for the results claim), and the merge Job's command after them. Eight indices of a
three-shape list, so five have nothing to tune and must still succeed. Exit 77 (skipped) where
PyYAML is missing; scripts/setup.sh installs python3-yaml.

    kubernetes_test.py MMTUNE_CLI SOURCE_DIR
"""
import json
import os
import re
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("kubernetes_test: skipped: no PyYAML (apt-get install python3-yaml)")
    sys.exit(77)

SHAPES = ["64x64x64", "48x80x32", "96x96x96"]
TUNE_ARGS = "--shapes " + ",".join(SHAPES) + " --threads 1 --strategy model --budget 0"


def fail(message):
    print("kubernetes_test: FAILED: " + message, file=sys.stderr)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def load_job(path):
    with open(path, encoding="utf-8") as f:
        documents = [d for d in yaml.safe_load_all(f) if d is not None]
    check(len(documents) == 1, f"{path}: expected one document, found {len(documents)}")
    job = documents[0]
    check(job.get("apiVersion") == "batch/v1" and job.get("kind") == "Job",
          f"{path}: not a batch/v1 Job")
    pod = job["spec"]["template"]["spec"]
    check(pod.get("restartPolicy") in ("OnFailure", "Never"),
          f"{path}: a Job's pods must restart OnFailure or Never")
    check(len(pod["containers"]) == 1, f"{path}: expected one container")
    volumes = {v["name"]: v for v in pod["volumes"]}
    for mount in pod["containers"][0]["volumeMounts"]:
        check(mount["name"] in volumes, f"{path}: mount {mount['name']} has no volume")
    return job


def run_container(job, workdir, env_extra, pod_name, mmtune_dir, shared_dirs):
    """Runs the Job's container command as its pod would, with volumes as local directories."""
    pod = job["spec"]["template"]["spec"]
    container = pod["containers"][0]
    volumes = {v["name"]: v for v in pod["volumes"]}
    env = {"PATH": mmtune_dir + os.pathsep + os.environ["PATH"], "HOME": workdir}
    for variable in container.get("env", []):
        env[variable["name"]] = variable["value"]
    env.update(env_extra)
    argv = list(container["command"]) + list(container.get("args", []))
    for mount in container["volumeMounts"]:
        volume = volumes[mount["name"]]
        if "emptyDir" in volume:
            local = os.path.join(workdir, pod_name, mount["name"])
            os.makedirs(local)
        else:
            local = shared_dirs[mount["name"]]
        # Whole path components only: /results must not turn /results-old into /tmp/...-old.
        pattern = re.compile(re.escape(mount["mountPath"]) + r"""(?=[/\s"']|$)""")
        argv = [pattern.sub(local, a) for a in argv]
    result = subprocess.run(argv, env=env, cwd=workdir, capture_output=True, text=True,
                            timeout=300, check=False)
    check(result.returncode == 0,
          f"{pod_name}: exit {result.returncode}\n{result.stdout}\n{result.stderr}")
    return result


def lookup_tier(mmtune, db, shape):
    result = subprocess.run([mmtune, "lookup", "--db", db, "--shape", shape, "--threads", "1",
                             "--json"], capture_output=True, text=True, check=False)
    check(result.returncode == 0, f"lookup {db} {shape}: {result.stderr}")
    return json.loads(result.stdout)["tier"]


def main():
    mmtune = os.path.realpath(sys.argv[1])
    source_dir = sys.argv[2]
    tune_path = os.path.join(source_dir, "deploy/kubernetes/tune-job.yaml")
    merge_path = os.path.join(source_dir, "deploy/kubernetes/merge-job.yaml")
    tune = load_job(tune_path)
    merge = load_job(merge_path)

    spec = tune["spec"]
    check(spec.get("completionMode") == "Indexed", "the tune Job must be Indexed")
    completions = spec["completions"]
    check(1 <= spec.get("parallelism", 1) <= completions, "parallelism must be 1..completions")
    pod = spec["template"]["spec"]
    container = pod["containers"][0]
    script = "\n".join(container.get("args", []))
    shards = re.findall(r'--shard\s+"?\$\{JOB_COMPLETION_INDEX\}/(\d+)"?', script)
    check(shards == [str(completions)],
          f"--shard must be JOB_COMPLETION_INDEX/{completions}, found {shards}")
    check("MMTUNE_TUNE_ARGS" in script and
          any(v["name"] == "MMTUNE_TUNE_ARGS" for v in container.get("env", [])),
          "the tune list must come from the MMTUNE_TUNE_ARGS environment variable")
    labels = spec["template"]["metadata"]["labels"]
    terms = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    check(any(t["topologyKey"] == "kubernetes.io/hostname" and
              t["labelSelector"]["matchLabels"].items() <= labels.items() for t in terms),
          "pods must repel each other per node (one tune per machine)")
    resources = container["resources"]
    check(resources["requests"] == resources["limits"],
          "requests must equal limits (Guaranteed QoS, whole cores)")
    check(merge["spec"].get("completions", 1) == 1, "the merge Job runs once")
    claims = {v["name"]: v["persistentVolumeClaim"]["claimName"]
              for job in (tune, merge) for v in job["spec"]["template"]["spec"]["volumes"]
              if "persistentVolumeClaim" in v}
    check(len(set(claims.values())) == 1, f"both Jobs must mount one results claim: {claims}")

    with tempfile.TemporaryDirectory(prefix="mmtune-k8s-") as workdir:
        results = os.path.join(workdir, "results")
        os.makedirs(results)
        shared = {name: results for name in claims}
        mmtune_dir = os.path.join(workdir, "bin")
        os.makedirs(mmtune_dir)
        os.symlink(mmtune, os.path.join(mmtune_dir, "mmtune"))
        idle = 0
        for index in range(completions):
            result = run_container(tune, workdir, {"JOB_COMPLETION_INDEX": str(index),
                                                   "MMTUNE_TUNE_ARGS": TUNE_ARGS},
                                   f"tune-{index}", mmtune_dir, shared)
            idle += "nothing to tune" in result.stderr
            check(os.path.isfile(os.path.join(results, f"tune-{index}.db")),
                  f"index {index} published no DB")
        check(idle == completions - len(SHAPES),
              f"{idle} indices had nothing to do, expected {completions - len(SHAPES)}")
        run_container(merge, workdir, {}, "merge", mmtune_dir, shared)
        leftovers = [n for n in os.listdir(results) if n.endswith(".part")]
        check(not leftovers, f"half-published files left: {leftovers}")
        for db in ("fleet.db", "mmtune.db"):
            for shape in SHAPES:
                tier = lookup_tier(mmtune, os.path.join(results, db), shape)
                check(tier == "exact", f"{db} answers {shape} from the '{tier}' tier")
    print(f"kubernetes_test: {completions} indices of {len(SHAPES)} shapes tuned, merged and "
          "exported as the manifests run them")


if __name__ == "__main__":
    main()
