// main() for the GoogleTest programs run under mpirun (tests/mpi/*_test.cpp):
// every rank runs every test; the program fails if any rank failed. Output is
// brief (failures only), so a failing rank's assertion is what shows.
#include <gtest/gtest.h>
#include <mpi.h>

#include "launch/process.h"

int main(int argc, char** argv) {
  launch::Process::init(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return failed;
}
