//===- ConcurrencyTest.cpp - Sessions under several threads ---------------===//
//
// Many sessions of one bundle on many threads, sessions created and
// destroyed in a loop (on two threads at once, with no descriptor or
// library left behind), and several threads calling one session through
// the C++ and the C API: their runs take turns (Session::lockRuns), so
// every thread gets the outputs of its own inputs. The bundle has a
// generated kernel and a oneDNN linear step (kernelAndLinearModel). These
// tests are also what the ThreadSanitizer build runs (docs/testing.md,
// "ThreadSanitizer").
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/Session.h"
#include "lmopt/Runtime/lmopt_runtime.h"

#include "SessionTestUtil.h"

#include <filesystem>
#include <thread>

using namespace lmopt::runtime;
using namespace lmopt::runtime::test;

namespace {

/// Runs `work(t, failure)` on `threads` threads and expects every failure
/// message to be empty.
template <typename Work> void onThreads(int threads, Work work) {
  std::vector<std::string> failures(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back(work, t, std::ref(failures[size_t(t)]));
  for (std::thread &thread : pool)
    thread.join();
  for (int t = 0; t < threads; ++t)
    EXPECT_EQ(failures[size_t(t)], "") << "thread " << t;
}

/// Open descriptors of this process.
size_t openDescriptors() {
  size_t count = 0;
  for ([[maybe_unused]] const auto &entry :
       std::filesystem::directory_iterator("/proc/self/fd"))
    ++count;
  return count;
}

/// One library thread per session: the threads of the test are the
/// concurrency under test.
SessionOptions oneThread() {
  SessionOptions options;
  options.threads = 1;
  return options;
}

constexpr int kThreads = 6;
constexpr int kRuns = 40;

/// kRuns runs of kernelAndLinearModel on inputs of thread `t`'s own, each
/// checked; the first failure goes to `failure`.
void runAndCheck(Session &session, int t, std::string &failure) {
  std::vector<NamedTensor> outputs;
  for (int i = 0; i < kRuns && failure.empty(); ++i) {
    float v = float(t * 1000 + i);
    if (Status st = session.run(kernelAndLinearInputs(v), outputs); !st)
      failure = st.toString();
    else
      failure = checkKernelAndLinearOutputs(v, outputs);
  }
}

} // namespace

TEST_F(SessionTest, ManySessionsOfOneBundleOnManyThreads) {
  std::string path = write(kernelAndLinearModel());
  onThreads(kThreads, [&](int t, std::string &failure) {
    std::unique_ptr<Session> session;
    if (Status st = Session::create(path, oneThread(), session); !st) {
      failure = st.toString();
      return;
    }
    runAndCheck(*session, t, failure);
  });
}

TEST_F(SessionTest, SessionsCreatedAndDestroyedInALoop) {
  std::string path = write(kernelAndLinearModel());
  // One session first, so that what the first session loads once per
  // process (oneDNN, libgomp) is not counted as a leak.
  {
    std::unique_ptr<Session> warm;
    ASSERT_TRUE(Session::create(path, oneThread(), warm));
  }
  size_t descriptors = openDescriptors();
  onThreads(2, [&](int t, std::string &failure) {
    for (int i = 0; i < 50 && failure.empty(); ++i) {
      std::unique_ptr<Session> session;
      if (Status st = Session::create(path, oneThread(), session); !st) {
        failure = "create " + std::to_string(i) + ": " + st.toString();
        return;
      }
      std::vector<NamedTensor> outputs;
      float v = float(t * 100 + i);
      if (Status st = session->run(kernelAndLinearInputs(v), outputs); !st)
        failure = st.toString();
      else
        failure = checkKernelAndLinearOutputs(v, outputs);
    }
  });
  // Each session holds its bundle's mapping and its kernels' memfd while
  // it lives; none may outlive it.
  EXPECT_EQ(openDescriptors(), descriptors);
}

TEST_F(SessionTest, ThreadsSharingASessionTakeTurns) {
  std::string path = write(kernelAndLinearModel());
  std::unique_ptr<Session> session;
  ASSERT_TRUE(Session::create(path, oneThread(), session));
  onThreads(kThreads, [&](int t, std::string &failure) {
    runAndCheck(*session, t, failure);
  });
}

TEST_F(SessionTest, ReadingOutputsInPlaceUnderTheLock) {
  std::string path = write(kernelAndLinearModel());
  std::unique_ptr<Session> session;
  ASSERT_TRUE(Session::create(path, oneThread(), session));
  onThreads(kThreads, [&](int t, std::string &failure) {
    for (int i = 0; i < kRuns && failure.empty(); ++i) {
      float v = float(t * 1000 + i);
      std::vector<NamedTensor> inputs = kernelAndLinearInputs(v);
      std::vector<NamedTensorView> views;
      for (const NamedTensor &input : inputs)
        views.push_back({input.name, TensorView::of(input.tensor)});
      auto lock = session->lockRuns();
      if (Status st = session->execute(views.data(), views.size()); !st) {
        failure = st.toString();
        return;
      }
      const auto *sum = static_cast<const float *>(session->outputData(1));
      if (sum[0] != 3 * v || sum[1] != 3 * v)
        failure = "run " + std::to_string(i) + " read another run's 'sum'";
    }
  });
}

TEST_F(SessionTest, CApiThreadsSharingASession) {
  std::string path = write(kernelAndLinearModel());
  lmoptSessionOptions options{1};
  lmoptSession session = nullptr;
  ASSERT_EQ(take(lmoptSessionCreate(path.c_str(), &options, &session)).first,
            LMOPT_STATUS_OK);
  onThreads(kThreads, [&](int t, std::string &failure) {
    int64_t dims[] = {2, 3};
    const char *names[] = {"a", "x"};
    for (int i = 0; i < kRuns && failure.empty(); ++i) {
      float v = float(t * 1000 + i);
      float data[6] = {v, v, v, v, v, v};
      lmoptTensor inputs[2];
      for (lmoptTensor &input : inputs)
        input = {LMOPT_DTYPE_F32, 2, dims, data, sizeof(data)};
      size_t count = 0;
      lmoptTensor *outputs = nullptr;
      Result r =
          take(lmoptSessionRun(session, 2, names, inputs, &count, &outputs));
      if (r.first != LMOPT_STATUS_OK) {
        failure = r.second;
        return;
      }
      const auto *sum = static_cast<const float *>(outputs[1].data);
      if (count != 2 || sum[0] != 3 * v || sum[1] != 3 * v)
        failure = "run " + std::to_string(i) + " got another run's outputs";
      lmoptTensorArrayDestroy(outputs);
    }
  });
  EXPECT_EQ(take(lmoptSessionDestroy(session)).first, LMOPT_STATUS_OK);
}
