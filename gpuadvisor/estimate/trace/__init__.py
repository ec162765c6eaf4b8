"""The PyTorch front-end of the estimator: any nn.Module -> an op graph (tracer.py says how).

zoo.py builds a model from its spec, recorder.py records a step op by op, classify.py says what each
aten op costs, as_cuda.py and recurrent.py make the CPU trace dispatch as a GPU would.
"""

from gpuadvisor.estimate.trace.tracer import TRACE_BATCHES, TraceOptions, trace_batches, trace_graph

__all__ = ["TRACE_BATCHES", "TraceOptions", "trace_batches", "trace_graph"]
